package policy

// Policy is a decoded and validated policy, version 1. Every field holds a
// typed value; nothing in it is raw TOML. The struct tags are the schema:
// the decoder accepts exactly these keys (case-sensitive) and nothing else,
// and the `doc` tags feed the generated policy reference.
type Policy struct {
	Version   Int       `toml:"version" doc:"Schema version. Required; this launcher reads 1."`
	Mode      Mode      `toml:"mode" doc:"\"wrapper\" confines the agent directly; \"components\" also brokers files, network, shell and secrets through component processes (root only)."`
	Workspace Workspace `toml:"workspace"`
	Files     Files     `toml:"files"`
	Network   Network   `toml:"network"`
	Limits    Limits    `toml:"limits"`
	Env       Env       `toml:"env"`
	Secrets   []Secret  `toml:"secrets" doc:"Components mode: headers the net component injects for matching hosts; values live in the sealed vault."`
	Commands  Commands  `toml:"commands" doc:"Components mode: the bash component's command policy."`
	Backups   Backups   `toml:"backups" doc:"Components mode: the fs component's backup store for recursive deletes."`
	CodeMode  CodeMode  `toml:"code_mode" doc:"Limits for Code Mode scripts."`

	src *source // where the policy came from, for messages; nil when built in code
}

type source struct {
	name string
	loc  locator
}

// Workspace is the agent's working directory.
type Workspace struct {
	Path Path `toml:"path" doc:"The agent's working directory: absolute, clean, existing, no symlink in any component. Required. Access to it is what [files] grants, nothing implicit."`
}

// Files lists the file-system access the agent gets. Each listed directory is
// granted whole, including files created in it later (SD-08).
type Files struct {
	Read      []Path `toml:"read" doc:"Paths the agent may read (files and directory listings)."`
	Write     []Path `toml:"write" doc:"Paths the agent may read and modify. Never executable: a write path may not equal, lie beneath or contain an exec path (SR-01), and no component may be a symlink (SR-02)."`
	Exec      []Path `toml:"exec" doc:"Paths the agent may read and execute."`
	Protected []Path `toml:"protected" doc:"Components mode: paths beneath the workspace whose mutation needs the person's approval, added to the built-in list."`
}

// Network selects how the agent reaches the network.
type Network struct {
	Mode               NetMode  `toml:"mode" doc:"\"none\" (default): no network; \"ports\": TCP to the listed ports only (Landlock ABI 4+); \"proxy\": HTTP(S) through the net component's domain policy."`
	ConnectTCP         []Port   `toml:"connect_tcp" doc:"Ports mode: TCP ports the agent may connect to, on any host (SD-03)."`
	BindTCP            []Port   `toml:"bind_tcp" doc:"Ports mode: TCP ports the agent may bind."`
	Allow              []Domain `toml:"allow" doc:"Proxy mode: host names (exact or *.suffix) the proxy allows."`
	Deny               []Domain `toml:"deny" doc:"Proxy mode: host names (exact or *.suffix) the proxy refuses; deny wins at equal specificity."`
	BlockAll           bool     `toml:"block_all" doc:"Proxy mode: true (default) refuses every host not allowed; false allows public hosts not denied."`
	UnsafeAllowPrivate []CIDR   `toml:"unsafe_allow_private" doc:"Proxy mode: private or reserved address ranges the proxy may reach despite SSRF protection. Printed on every run."`
	AllowECH           bool     `toml:"allow_ech" doc:"Proxy mode: false (default) refuses a byte tunnel whose TLS ClientHello carries encrypted_client_hello (ECH); true lets it through, its outer server_name still held to the CONNECT host. Chromium-based clients send an ECH extension in every hello, a decoy mostly; with this on, a client can reach any name behind an allowed host's front-end that accepts ECH."`
	UnixSockets        bool     `toml:"unix_sockets" doc:"Allow socket(AF_UNIX). Default false: Landlock before ABI 9 does not cover pathname sockets (SR-08)."`
}

// Limits bound the agent's resources. "0" means unlimited where allowed.
type Limits struct {
	Memory    Size     `toml:"memory" doc:"Memory of the agent's tree (cgroup memory; address space per process otherwise, SD-05). \"0\" is unlimited."`
	Processes Int      `toml:"processes" doc:"Processes and threads of the agent's tree (cgroup pids; RLIMIT_NPROC otherwise)."`
	OpenFiles Int      `toml:"open_files" doc:"Open file descriptors per process (RLIMIT_NOFILE)."`
	FileSize  Size     `toml:"file_size" doc:"Largest file the agent may write (RLIMIT_FSIZE). \"0\" is unlimited."`
	CPUTime   Duration `toml:"cpu_time" doc:"CPU time per process (RLIMIT_CPU), whole seconds. \"0\" is unlimited."`
	TmpSize   Size     `toml:"tmp_size" doc:"Size of the agent's private /tmp (tmpfs)."`
}

// Env builds the agent's environment. Nothing is inherited unless passed.
type Env struct {
	Pass []EnvName `toml:"pass" doc:"Names of variables copied from the launcher's environment."`
	Set  EnvSet    `toml:"set" doc:"Variables set to fixed values."`
}

// EnvSet maps variable names to values. (The map's key type is a plain
// string because the TOML library cannot decode into named key types;
// CheckKey validates the names in the schema walk.)
type EnvSet map[string]Text

// CheckKey reports whether k is a valid environment variable name.
func (EnvSet) CheckKey(k string) error {
	var n EnvName
	return n.UnmarshalTOML(k)
}

// Secret is one header-injection rule (components mode).
type Secret struct {
	Name     SecretName `toml:"name" doc:"Name of the secret in the vault."`
	Hosts    []Domain   `toml:"hosts" doc:"Hosts (exact or *.suffix) whose requests get the header. A host two rules match gets the secret of the most specific pattern (exact before *.suffix, the longer suffix first); one pattern in two rules is an error."`
	Header   HeaderName `toml:"header" doc:"HTTP header to set."`
	Template Template   `toml:"template" doc:"Header value; {secret} is replaced by the secret, exactly once."`
}

// Commands is the bash component's command policy (components mode).
type Commands struct {
	Auto     []Command `toml:"auto" doc:"Command prefixes (parsed words) that run without asking."`
	Approval []Command `toml:"approval" doc:"Command prefixes that need the person's approval; so does a command that may be one when it runs (a word known only then, an option or NAME=value before the prefix's next word, a target runner's targets in any order, the prefix's options in other spellings: make \"$x\", make -C dir deploy, make all deploy, git push -f for git push --force)."`
	Timeout  Duration  `toml:"timeout" doc:"Wall-clock limit for one command."`
	Output   Size      `toml:"output" doc:"Cap on one command's captured output."`
}

// Backups configures the recursive-delete backup store (components mode).
type Backups struct {
	Quota Size `toml:"quota" doc:"Size of the backup store; older backups are evicted to make room only when the person confirms it, shown which."`
}

// CodeMode limits one Code Mode script.
type CodeMode struct {
	Memory     Size     `toml:"memory" doc:"Memory of the script's VM."`
	Stack      Size     `toml:"stack" doc:"Stack of the script's VM."`
	Deadline   Duration `toml:"deadline" doc:"Wall-clock deadline; the worker is killed from outside when it passes."`
	ToolCalls  Int      `toml:"tool_calls" doc:"Tool calls one script may make."`
	Output     Size     `toml:"output" doc:"Cap on the result plus log lines."`
	ScriptSize Size     `toml:"script_size" doc:"Largest script accepted."`
}

// Default returns the values an absent key takes. Absent sections are safe:
// no file access, no network, bounded resources.
func Default() Policy {
	return Policy{
		Mode:    ModeWrapper,
		Network: Network{Mode: NetNone, BlockAll: true},
		Limits: Limits{
			Memory:    4 * GiB,
			Processes: 512,
			OpenFiles: 4096,
			FileSize:  2 * GiB,
			CPUTime:   0,
			TmpSize:   1 * GiB,
		},
		Commands: Commands{Timeout: Duration(10 * 60 * 1e9), Output: 1 * MiB},
		Backups:  Backups{Quota: 3 * GiB},
		CodeMode: CodeMode{
			Memory:     64 * MiB,
			Stack:      1 * MiB,
			Deadline:   Duration(10 * 1e9),
			ToolCalls:  200,
			Output:     1 * MiB,
			ScriptSize: 256 * KiB,
		},
	}
}
