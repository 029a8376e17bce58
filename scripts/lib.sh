# Shared by scripts/demo and scripts/test: make a fresh Debian/Ubuntu machine
# ready to build pinfold. Installs only what is missing.

ensure_deps() {
	if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
		export PATH="/usr/local/go/bin:$PATH"
	fi
	if ! command -v go >/dev/null 2>&1; then
		echo "pinfold: error: Go is not installed (looked in PATH and /usr/local/go/bin)" >&2
		exit 1
	fi
	local missing=()
	command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
	command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
	dpkg -s libseccomp-dev >/dev/null 2>&1 || missing+=(libseccomp-dev)
	command -v sha256sum >/dev/null 2>&1 || missing+=(coreutils)
	if [ "${#missing[@]}" -gt 0 ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "pinfold: error: missing packages: ${missing[*]}; run as root or install them first" >&2
			exit 1
		fi
		echo "pinfold: installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
	export CGO_ENABLED=1
	# As the launcher is built (build_launcher): the tests build it, and
	# cmd/launcher's own test binary is static too.
	case " ${GOFLAGS:-} " in
	*" -tags=netgo "*) ;;
	*) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=netgo" ;;
	esac
}

# The launcher is linked statically (cmd/launcher/static_linux.go); netgo
# leaves the C resolver, which a static binary must not use, out of it.
build_launcher() {
	mkdir -p bin
	go build -tags netgo -o bin/launcher ./cmd/launcher
}
