module github.com/pinfold/pinfold

go 1.26.8

require github.com/BurntSushi/toml v1.6.0

require (
	github.com/containerd/cgroups/v3 v3.1.3 // indirect
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	github.com/moby/sys/userns v0.1.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/seccomp/libseccomp-golang v0.11.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
