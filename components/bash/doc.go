// Package bash is the bash component's command analyzer and decision
// engine (DESIGN.md §5, issue 7): it reads a command line the agent wants
// to run and decides whether it runs automatically, needs the person's
// approval, needs a separate delete confirmation with a backup, or is
// refused. It is pure Go: it runs nothing, reads no file, and keeps no
// state between calls.
//
// # Analyze
//
// Analyze parses a command line with mvdan.cc/sh/v3/syntax (bash dialect)
// and returns every simple command in it (SimpleCommand), in the order
// the shell would start them: in pipelines and && || ; & lists,
// subshells and { } blocks, if/while/until/for/select/case bodies,
// function bodies (whether or not the function is called), time, ! and
// coproc, $(…) and backquotes and <(…) >(…) anywhere in a word
// (arguments, assignments, array elements, redirection targets, here-
// documents, parameter-expansion defaults and replacements, arithmetic,
// [[ ]] and case patterns).
//
// Each command is unwrapped to the command that really runs, and the
// wrappers are kept as its layers (SimpleCommand.Wrappers). Each
// wrapper's options are read from a table of them all (unwrap.go), as its
// getopt reads them: short and long, which take a value (attached or the
// next word), which take an optional value only when attached (xargs
// -i{}, --replace=R), which end the options and which mean it runs
// nothing (--help, sudo -l); --name=value and --name value alike. An
// option its table does not list, an unknown letter, an unknown name, or
// a long option written shorter than its name (getopt takes any unique
// prefix: timeout --kill 5 is --kill-after 5), is not read: it may take
// the next word as its value, so what the wrapper runs is unknown and
// the command needs approval (builtin.dynamic). The tables are the union
// of the versions read (coreutils, util-linux, findutils, sudo, strace,
// procps-ng, systemd, and the rest), an option whose value differs
// between versions left out:
//
//   - sudo (its options, -u USER and the like, -h HOST, --, VAR=value),
//     doas, env (-i, -u NAME, -C DIR, -S STRING when it is a plain list
//     of words, a word that starts with # ending it as a comment: a
//     seventeenth hunt, NAME=value of any name), command (but command -v/-V runs
//     nothing), builtin, exec (-a NAME), nice (-n N, -N, --N), nohup,
//     timeout (options and DURATION), stdbuf, ionice, chrt (options and
//     the priority, which is optional since util-linux 2.42 and so read
//     only when it is a number), setsid, time (the program; the keyword
//     is syntax), flock (FILE CMD, FILE -c STRING), busybox and toybox
//     APPLET, xargs (its command; arguments it adds are marked Appended;
//     its --process-slot-var NAME, which sets NAME for xargs itself
//     too, is an assignment of a value known only at run time: an H6
//     hunt, --process-slot-var=PATH ls ran ./0/ls),
//     strace's -E NAME=VALUE (--env) and systemd-run's -E (--setenv),
//     which are assignments for the command as env's are (a twelfth
//     hunt: strace -E LD_PRELOAD=./x.so ls loaded x.so), and
//     systemd-run's -p (--property, --timer-property and the like) of
//     an Exec* (ExecStartPre=), Environment*, WorkingDirectory or
//     RootDirectory property, or of a value not a literal, which make
//     what runs unknown (a fourteenth hunt: -p ExecStartPre=/ws/x ran x),
//     watch (-x CMD, or its words as sh -c), taskset (options and MASK;
//     -p PID runs nothing), prlimit (--RES=N, -nN; -p PID runs nothing),
//     setarch ARCH and the names it runs as (linux32, linux64, i386,
//     x86_64, uname26 and the other architectures), numactl, strace,
//     ltrace, valgrind (whose --tool must name one of its tools: a
//     seventeenth hunt, --tool=../../../ws/x ran x) and firejail
//     (which take --name=value only and
//     refuse a long option they do not know, so only their short options
//     are listed), catchsegv, chronic, unbuffer (-p; any flag of Expect's
//     spawn makes what runs unknown), setpriv, cgexec -g, systemd-run,
//     npx and bunx and uvx, npm/pnpm/yarn exec and dlx, uv/poetry/
//     pipenv/pipx/pdm/hatch run, bundle exec (npm takes any of its
//     settings as an option of exec: only those most used are listed,
//     --script-shell and --userconfig not, which name the shell its
//     command runs through; npm exec and npx given no command run that
//     shell on standard input, as a bare sh: a fifteenth hunt; npm's
//     parser reads a word of one dash as letters alone, only the last
//     taking a value, from the next word: one it reads otherwise,
//     -c=CMD, -cy, -ctrue, makes what runs unknown; it runs its last
//     -c, and its words or that shell when that is empty: a
//     seventeenth hunt, npx -cy rm -rf src and npx -c= rm -rf src ran
//     rm),
//     gosu and su-exec USER CMD, pkexec, fakeroot (and
//     fakeroot-sysv and fakeroot-tcp, Debian's two: an H6 hunt), dbus-run-session,
//     proxychains and proxychains4 (-q and -f FILE as whole words, at
//     most two, which is all proxychains-ng reads alike), choom (-n N;
//     -p PID runs nothing), ssh-agent [options] CMD; and (a fourteenth
//     hunt, each ran rm -rf src unseen) npm exe (npm takes a unique
//     prefix of a command), yarn run (what it names is analysed as a
//     command: a script's name is a program the analyzer does not
//     know), rustup run TOOLCHAIN (its options read after TOOLCHAIN
//     too, and "--" there, as clap reads them; +TOOLCHAIN before run
//     is as an option there: a fifteenth hunt; a TOOLCHAIN that is a
//     path, whose programs run, is dynamic: a sixteenth), pyenv, rbenv, nodenv,
//     goenv, plenv, jenv and asdf exec, asdf env CMD UTIL, volta run,
//     conda, mamba and micromamba run (--env and --cwd left out), and
//     (a fifteenth hunt) pnpx as pnpm dlx, bun x as bunx, uv tool run
//     as uvx and hatch env run as hatch run (an option among those
//     words makes what runs unknown), corepack TOOL[@VERSION], and (a
//     sixteenth hunt, pnpm bash -c CMD ran CMD) pnpm's and yarn's word
//     that is none of their commands (pmCommands), which each runs as a
//     script or a program, as yarn run's is, pnpm with VERSION, yarn
//     workspace NAME (a deletion then keeps the whole workspace), bun
//     run (a file of JavaScript or TypeScript aside, which bun runs
//     itself), and yarnpkg as yarn; the dynamic loader
//     (ld.so, ld-linux*.so* by a system path; --preload, --audit and
//     --library-path left out), bear, ccache, sccache, distcc and icecc
//     (their compiler, whose options are read: gcc -B; distcc and icecc
//     given an option run cc; ccache's KEY=VALUE settings make it
//     dynamic), cmake -E env (its NAME=VALUE are assignments for the
//     command), cmake -E chdir DIR (a deletion then keeps the whole
//     workspace) and cmake -E time (a cmake -E command that is none of
//     its documented ones, cmakeTools, is dynamic: its internal
//     __run_co_compile runs the command after --, a sixteenth hunt);
//     capsh, gdb, lldb,
//     chpst, faketime, torsocks, eatmydata, sshpass, xvfb-run, tmux,
//     screen, hyperfine, entr, at, nix-shell, scan-build, tsp, nq,
//     gpg-agent, gtk-launch, (a sixteenth hunt) memusage, sotruss,
//     rust-gdb, rust-lldb, msgexec, (a seventeenth) niceload, mispipe,
//     zrun, retry, timelimit, rush, xjobs, tcpserver, (a nineteenth)
//     xtrace, datefudge, dtach, abduco, mpirun, srun, schedtool,
//     trace-cmd, daemon, tcpsvd, udpsvd, runsv, runsvdir, cttyhack,
//     openvt, crond, inetd, msgfilter, systemd-socket-activate,
//     pg_virtualenv, gdbtui, (an H6 hunt) debconf and
//     debconf-apt-progress, (an H12 hunt: keep-one-running rm -rf src
//     was automatic) run-one's other names (run-this-one,
//     keep-one-running, run-one-constantly, run-one-until-success and
//     -failure), caffeinate, xinit, startx, lxc-attach, lxc-execute,
//     libtool (every mode runs its command: libtool --mode=execute rm
//     -rf src), grc, colormake, pseudo, fakeroot-ng, byobu and cset, the shells whose language the analyzer
//     does not read (csh, tcsh, pwsh, nu, xonsh, elvish, rc, es, osh,
//     ysh, lksh, sash, ion, murex, scsh) and the other runners of
//     opaqueRunners, and mise exec, x and en, nix develop, shell and
//     run, bun exec (Bun's shell), and (a sixteenth hunt) pixi run,
//     exec and shell, devbox run and shell, fnm exec, tox exec, lerna
//     and nx exec, poetry, pipenv and hatch shell, the secret managers'
//     run and exec (op, doppler, aws-vault, sops exec-env, …), ip netns
//     and cargo watch, (a seventeenth) flatpak enter and build
//     (opaqueSubs), are not unwrapped: what they run
//     needs approval (builtin.dynamic); GNU parallel,
//     sem and env_parallel make their commands at run time and run them through a
//     shell, so what they run needs approval (builtin.dynamic);
//   - programs that run a shell: su and runuser (options anywhere, as
//     getopt permutes them: -c/--command/--session-command STRING is
//     walked; su USER ARG... runs the user's shell, -s SHELL or sh, with
//     the ARGs; runuser -u USER [--] CMD runs CMD), script (-c STRING
//     anywhere; its FILE is not a command), sg GROUP [-c] STRING (one
//     word, as sh -c); setarch (linux64, …), firejail and systemd-run
//     given no command, sudo -s/-i, doas -s, su USER, script, sg GROUP and
//     newgrp start a shell that reads standard input, which is treated as
//     a bare bash is (a literal here-document is walked, anything else is
//     Script); nsenter and unshare are not unwrapped: they are refused
//     ("structural.system") whatever they run;
//   - find -exec/-execdir/-ok/-okdir: the find is recorded, and each
//     command it runs separately, under a "find -exec" layer: up to ;,
//     or for -exec and -execdir up to a + right after a word holding {}
//     (as GNU find reads them: any other + is a word of the command,
//     find . -exec cp + x .git/hooks \; runs cp + x .git/hooks); a word
//     there that is not a literal and may be ; or + at run time ("$x",
//     ?, an unquoted expansion) makes the find dynamic, since which
//     words are find's own (-fprint FILE) is known only then;
//   - a command word that is filled in at run time, under xargs -I R
//     (-iR, --replace=R; -i and --replace alone are {}) or find -exec and
//     the like ({}), or that holds the string filled in (./{}.sh), sets
//     SimpleCommand.Dynamic: what runs is known only then. Such a word
//     where a wrapper's options stand is read as a word that is not a
//     literal is (xargs -I{} timeout {} 5 CMD);
//   - git's global options before the subcommand (-C DIR, -c KEY=VALUE,
//     --git-dir=…, -P, …) are taken out into GitOptions, so that Words is
//     "git SUBCOMMAND …" in every spelling; a rustup proxy's +TOOLCHAIN
//     that names one (not a path, builtin.exec-option's) is taken out
//     of Words too (cargo +nightly publish was no publish to the rules
//     and prefixes, whose subcommand is the first word).
//
// Strings that are shell code are parsed and walked as well, when they
// are literals (as dash reads them, and as bash does where the two
// differ, unless bash or eval runs them: /bin/sh is dash here and bash
// elsewhere; code that either does not parse is dynamic): bash/sh/dash/zsh/ksh -c STRING (and
// their kin by Debian's names: ksh93, rksh93, zsh5, rzsh, pdksh, loksh,
// oksh; an H12 hunt, ksh93 -c 'rm -rf src' was automatic) (with option clusters such
// as -lc, -ec, -o pipefail -c), a literal here-document or here-string
// given to a shell as its script, eval's arguments, trap's action, su,
// runuser and script -c, sg's string, npx -c, flock -c, watch's command,
// strace -o |CMD and -o !CMD (--output; strace pipes the trace to sh -c
// CMD: a twelfth hunt),
// git rebase --exec (also -x in a group of short options, -fx CMD, and
// any prefix of --exec git takes), git submodule foreach, git
// filter-branch's filters and --setup, and git bisect run; git grep's -O
// and difftool's -x also at the end of a group of short options (-iOCMD,
// -yx CMD). A string that is not a literal, a command word
// that is not one ($CMD, $(…), "${x}", a glob, a brace expansion,
// $'\x..'), a word that is not a literal where a wrapper's options stand,
// or an option the wrapper's table does not list, sets
// SimpleCommand.Dynamic; so does a git global option whose value may be
// several words (git -C $d clean: a later word would be the subcommand),
// or a word that is not a literal where git's options or subcommand
// stand. A shell run on a script file or on
// standard input, source and ., and a program named by a path outside
// the system directories (./build.sh, bin/tool) set SimpleCommand.Script.
//
// Words are resolved as the shell would for literals (quotes removed,
// escapes applied: g\it and "g"it are git); anything that expands at run
// time makes a word non-literal (Word.Literal false), and its Text then
// shows the expansion's source. Braces and brackets are looked for
// across the word's quoted pieces, as bash reads them: an unquoted {
// with an unquoted , or .. and } after it, or an unquoted [ with an
// unquoted ] after it, is an expansion whatever is quoted between
// ({"rm",-rf,src} runs rm -rf src, .gi["t"] matches .git: a tenth
// hunt); a quoted or escaped brace, comma or bracket is none ('{a,b}',
// {a","b}, \{a,b}, and {} and {x} are literals). Quoted dots count:
// {"a"..c}, which bash leaves alone, is taken as a sequence.
//
// # Decide
//
// Decide (DecideWith, with the launcher's paths; DecideEach, per command)
// decides each simple command in this order and returns the most
// restrictive decision of the line (Refuse > ConfirmDelete > Approve >
// Auto; the first such command on a tie), naming the rule and the command
// that decided:
//
//  1. structural protections, which no policy changes:
//     "structural.authority" (Refuse): a word, wrapper word, assignment
//     or redirection names one of Options.Authority (the vault, session
//     directory, backup store, policy file, launcher binary) or a path
//     beneath it;
//     "structural.setuid" (Refuse): chmod or install -m with a set-user-ID
//     or set-group-ID mode (+s, u+s, g=s, 4755, 02755), setcap;
//     "structural.system" (Refuse): mount with arguments, umount, chroot,
//     pivot_root, nsenter, unshare, insmod, rmmod, modprobe;
//     "structural.exec-env" (Approve): setting a variable that makes
//     programs run other code or rebinds command names (LD_PRELOAD,
//     LD_LIBRARY_PATH, BASH_ENV, ENV, PATH, PAGER, EDITOR, SHELL (flock
//     -c, script), TAR_OPTIONS, ZIPOPT and ZIP, UNZIP, UNZIPOPT,
//     RSYNC_RSH, NODE_OPTIONS, PERL5LIB, PERLLIB, RUBYLIB, SUDO_EDITOR,
//     MAKEFILES, MANOPT, CURL_HOME, WGETRC, BASH_FUNC_*…), any
//     GROFF_*, npm_config_*, pnpm_config_* and YARN_* variable in any
//     case, and a version manager's (PYENV_*, RBENV_*, NODENV_*,
//     GOENV_*, PLENV_*, JENV_*, ASDF_*, MISE_*, RTX_*: a twelfth hunt,
//     PYENV_HOOK_PATH=./h pip --version sourced the hook h/exec/x.bash),
//     corepack's (COREPACK_*, and XDG_CACHE_HOME, where its home is by
//     default: a sixteenth hunt, COREPACK_HOME=$PWD/h corepack
//     yarn@1.22.99 ran h's yarn), GH_EDITOR, GH_PAGER, GH_BROWSER and
//     GH_CONFIG_DIR (a sixteenth hunt), any variable whose name ends
//     in PAGER or EDITOR in any case, BAT_CONFIG_PATH and SYSTEMD_LESS
//     (an H12 hunt: SYSTEMD_PAGER=./x journalctl --help on a terminal,
//     which script -c gives, ran x; PSQL_PAGER, AWS_PAGER, BAT_PAGER) (GROFF_BIN_PATH=. groff ran ./troff; npm_config_editor,
//     script-shell, git and the like run programs), GOFLAGS (but a
//     literal naming no exec, vettool nor ldflags: GOFLAGS=-mod=mod),
//     GOPROXY (but a literal naming no file: proxy, from which go runs
//     a toolchain unchecked: a twelfth hunt), GOENV, GOTOOLCHAIN, GOROOT, CC, CXX, CPP, AR, LD, COMPILER_PATH,
//     GCC_EXEC_PREFIX and any CGO_* but CGO_ENABLED (an eleventh hunt:
//     GOFLAGS=-toolexec=./s go build ran s; CC=./s with cgo),
//     OPENSSL_CONF, OPENSSL_ENGINES, OPENSSL_MODULES, KUBECONFIG,
//     AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, DOCKER_CONFIG,
//     GNUPGHOME, RUSTC, RUSTC_WRAPPER, RUSTC_WORKSPACE_WRAPPER, RUSTDOC,
//     RUSTFLAGS, RUSTDOCFLAGS, RUSTUP_TOOLCHAIN, RUSTUP_HOME, MAVEN_OPTS,
//     PKG_CONFIG, SSH_SK_PROVIDER, RIPGREP_CONFIG_PATH (its --pre: a
//     thirteenth hunt), JAVA_HOME, PYTHONHOME, PYTHONUSERBASE (JAVA_HOME=./j
//     mvn -v ran ./j/bin/java, PYTHONUSERBASE=./u pip --version a .pth
//     file: a thirteenth hunt), GOCACHEPROG, GOAUTH, GCCGO, FC,
//     GRADLE_OPTS, JAVA_OPTS, ANT_OPTS, SBT_OPTS, MAVEN_DEBUG_OPTS,
//     MAVEN_BASEDIR, CLASSPATH, PYTHONPLATLIBDIR, LESS (but a literal
//     naming no lesskey nor command: LESS=-FRX), LESSKEY, LESSKEYIN,
//     LESSKEY_SYSTEM, LESSKEYIN_SYSTEM, LESSKEY_CONTENT,
//     GIO_EXTRA_MODULES, GIO_MODULE_DIR, XDG_DATA_HOME, XDG_DATA_DIRS,
//     VALGRIND_LIB, GEM_HOME, GEM_PATH, R_PROFILE_USER, R_ENVIRON_USER,
//     PSQLRC, any LUA_INIT* and any CCACHE_* but CCACHE_DISABLE,
//     CCACHE_MAXSIZE and a few more (a fourteenth hunt: each names a
//     program, a library, code or options that do), JDK_JAVAC_OPTIONS,
//     PGSYSCONFDIR, MYSQL_HOME and MARIADB_HOME (a fifteenth hunt:
//     javac's options, psql's psqlrc, mysql's my.cnf), MAVEN_ARGS,
//     MAVEN_CONFIG and GRADLE_USER_HOME (a sixteenth hunt: mvn's and
//     mvnw's arguments, gradle's init scripts and JVM options) and any CARGO_* but CARGO_TARGET_DIR, CARGO_INCREMENTAL,
//     CARGO_TERM_* and a few more (KUBECONFIG=./k kubectl get pods ran
//     its exec plugin; OPENSSL_CONF=./c openssl version a library), any GIT_*
//     variable but GIT_AUTHOR_*, GIT_COMMITTER_*, GIT_TERMINAL_PROMPT, GIT_MERGE_AUTOEDIT and
//     GIT_OPTIONAL_LOCKS (GIT_PROXY_COMMAND, GIT_ALLOW_PROTOCOL, GIT_DIR
//     and the rest run a program, allow one, or move where git works),
//     before a command, through env or sudo, or by export/declare; also a
//     for loop over such a variable, read, mapfile and printf -v naming
//     one, export or declare -x of one by name (builtin and command
//     included), a nameref (declare/local/typeset -n, through which a
//     plain assignment sets a variable not seen by name), read or
//     mapfile into a variable named only at run time, and unset PATH
//     (or PATH[0]), after which bash and dash look for programs in the
//     working directory (an H6 hunt: unset PATH; ls ran ./ls);
//     "structural.git-hooks" (Approve): a write to .git/hooks, git config
//     core.hooksPath or init.templateDir (also through git -c, git clone
//     -c/--config), git clone/init --template;
//     "structural.git-config" (Approve): a write to .git/config,
//     .git/config.worktree, .git/commondir, .git itself or .config/git, git config (or git -c) of a key that
//     makes git run a program or read other configuration (alias.*,
//     core.pager, core.sshCommand, core.fsmonitor, filter.*, *.helper,
//     include.path, remote.NAME.vcs (the helper git-remote-VCS a fetch
//     runs, by a path when it holds a slash: a nineteenth hunt),
//     sendemail's *cmd and smtpServer of an identity too, also
//     through scalar -c, …; the values of -f, -t, --type and the other
//     options that take one, in any prefix git takes, are not the key,
//     every word after "--" is a key or value, and each such word is
//     looked at), git config --edit, git config --rename-section
//     (rename-section, any prefix git takes: a fourteenth hunt, a
//     section foo renamed alias made foo.x = !CMD an alias that
//     ran), --upload-pack/--receive-pack
//     (any prefix) and --exec for any subcommand but rebase, clone's
//     and ls-remote's -u also in a group (-qu), git --exec-path=;
//     git --git-dir and --work-tree (but --git-dir=.git, --work-tree=.)
//     as GIT_DIR; git -C DIR with DIR not a literal ("$PWD" aside),
//     absolute, climbing (..) or a home, or on a line that runs git
//     init or git clone (a bare repository made there, its config
//     written, then read);
//     "structural.git-state" (Approve): a write anywhere else under .git
//     (rebase-merge/, sequencer/, MERGE_MSG, info/, …, and its lock
//     files, which git renames onto what they lock: rm, unlink and
//     flock of one aside), and git rebase, am, cherry-pick, revert and merge --continue,
//     --edit-todo (am's --resolved, -r), which go on from that state (a
//     rebase's todo list runs its exec lines);
//     "structural.git-refs" (Approve): git update-ref -d, --stdin or of
//     refs/stash, git receive-pack (git-receive-pack too: the refs its
//     input names, a nineteenth hunt), git filter-repo but --analyze and
//     --dry-run, git reflog delete and expire, git gc --prune, git
//     prune, git repack -d, git branch -D (-d or -m or -c with --force,
//     -M, -C), git tag -d, git fetch and pull --prune (-p) and
//     --prune-tags (-P), a fetch or pull refspec (or --refmap) whose
//     destination is not under refs/remotes/ (+refs/heads/*:refs/heads/*,
//     x:main; the first word not an option is the repository, whose URL
//     may hold a colon), git remote prune, update --prune and add
//     --mirror, and git config (or git -c) of gc.*, maintenance.*,
//     core.logAllRefUpdates, fetch.prune, fetch.pruneTags and a remote's
//     prune, pruneTags, fetch and mirror (gc.pruneExpire=now), which
//     throw away what no backup of the workspace holds;
//     "structural.protected-path" (Approve): a write to .ssh, .vscode,
//     .mcp.json, .gitconfig, a shell start-up file (.bashrc, .profile, .zshrc, …),
//     a tool's configuration in the workspace (toolConfigs, a fourteenth
//     hunt: .mvn, .cargo, rust-toolchain and rust-toolchain.toml, .hg,
//     .yarnrc, .yarnrc.yml, .npmrc; .cargo and .hg whole since a
//     fifteenth hunt, cp /tmp/c/config.toml .cargo/ and mv conf .cargo
//     having put a configuration there; gradle.properties,
//     gradle/wrapper, .sbtopts and .jvmopts since a sixteenth; the git
//     hook managers' .husky, .pre-commit-config.yaml, .lefthook and
//     lefthook's configuration files (lefthook.yml, .lefthook.toml,
//     lefthook-local.json and kin), which run on the person's next git
//     commit, Bazel's .bazelrc and .bazeliskrc, yarn's .yarn/releases
//     and .yarn/plugins (the yarn yarnPath runs, its plugins) and
//     .tool-versions (asdf's and mise's path: versions) and
//     .valgrindrc since a seventeenth,
//     when a path that ends where one of two names begins (gradle, of
//     gradle/wrapper: cp -r x/wrapper gradle/, cd gradle) counts too;
//     not a project's own build scripts, tox.ini, Makefile,
//     package.json, which the person runs as the project's; the bash analyzer's alone,
//     not fs's, and a glob is not taken to match rust-toolchain; what
//     an archive, a patch or a checkout holds is not seen) or one of
//     Options.Protected; rustup toolchain
//     link (builtin.exec-option) likewise makes a directory's cargo and
//     rustc the ones a rust-toolchain file runs.
//     "A write" is a redirection (>, >>, >|, <>, &>, >& FILE) to the path,
//     an assignment of it, or its mention (as a path-like part of any
//     word: --out=.git/config, open('.git/hooks/x')) in the words of a
//     command that is not read-only (cat, grep, ls, diff, find without
//     -delete, git log/show/diff/status, less without -o, -O,
//     --log-file or a word not a literal (an H12 hunt: given a
//     terminal, cat x | less -F -o .git/hooks/pre-commit wrote the
//     hook), … only read, but not as a
//     package runner's command, which is the project's program of that
//     name first: npx cat ran node_modules/.bin/cat, a seventeenth
//     hunt; but git's
//     --output=FILE, xxd given two operands (INFILE OUTFILE) and tree
//     -o write: a thirteenth hunt, git log -1 --format=…
//     --output=.git/config wrote a core.fsmonitor git status ran), and in a
//     wrapper's own options whatever it runs (env -C .git/hooks cp x
//     pre-commit, sudo -D, time -o, strace -o, valgrind --log-file: a
//     twelfth hunt), and among the starting points of a find that runs
//     a command that is not read-only, or writes by a redirection, with
//     -exec, -execdir, -ok or -okdir (find .git/hooks -exec cp x {} \;;
//     a starting point of "." or the workspace, or a list -files0-from
//     reads, is not one: what the command is given beneath it is known
//     only at run time, as what xargs gives one is); a value attached
//     to a group of short options counts as a path too (gcc -o.git/hooks/pre-commit, 7z x
//     -o.git/hooks, tar -C.git/hooks: a twelfth hunt). A word that is
//     not a literal names what it may expand to: its $'…' decoded, its
//     braces expanded ({a,b}, {a..z}, .{"git",x}), and a glob
//     component (* ? [ ], .gi["t"], an extended glob) taken as each protected name it could match,
//     in any case, a bracket expression holding a class, collating
//     symbol or equivalence class ([[:alpha:]], [[.t.]], [[=t=]]) as
//     any one character (an eleventh hunt: .gi[[:alpha:]]/config wrote
//     .git), a leading dot only by a dot (.gi?, .[g]it, not * or
//     ?git) unless the line may set dotglob or GLOBIGNORE, which is
//     taken to be so wherever either name is in its text or its words
//     (for GLOBIGNORE in x, read, ${GLOBIGNORE:=x}, shopt -s dotglob;
//     .gi?/config, .{git,x}/config, $'\x2egit/config' each wrote .git,
//     and, in a for loop over GLOBIGNORE, ?git/config); a pattern
//     that makes more than 256 paths, or longer than 1024 bytes, counts
//     as protected.
//     A line whose every command that needs the person needs them only
//     for a redirection, or a word its program only writes, to a path a
//     command's worker has read-only is refused at once (Refuse, under
//     the rule that would have asked; the reason names the path and says
//     how it is changed: launcher fs write, which asks the person, or the
//     person's own edit outside the session). A program's words are read
//     as GNU getopt_long reads them from the program's own option table
//     (writtenWords: options anywhere before "--", grouped short
//     options, a value attached or in the next word, a long option by
//     any prefix that names one alone): the destination of mv, cp,
//     install and ln (the last of two or more operands, or -t's own
//     word: cp -vt DIR); every operand of tee, touch, mkdir, truncate
//     and install -d; every operand after chmod's mode (all of them
//     after chmod -x, whose mode is an option) and chown's or chgrp's
//     owner (all with --reference); with sed -i (-i.bak, -in: the
//     suffix n, --in-place=SUF), its files after the script (the first
//     operand unless -e or -f gives one); dd's last of= (an earlier one
//     is not opened). Read-only there are the
//     paths fs protects, which the launcher mounts read-only for every
//     command, or moves aside when a command makes one
//     (components/session): a literal path in the workspace under .ssh,
//     .vscode, .mcp.json, a shell start-up file, .gitconfig or
//     .config/git, under hooks, config, config.worktree or commondir
//     beneath a .git (not in its objects), or under one of
//     Options.Protected. Asked, the person's yes could not make the write
//     (EROFS, or EBUSY renaming over a mounted file: mv and sed -i fail
//     and keep their source; onto a protected name that does not exist,
//     cp, touch, mkdir or ln make it only to have it moved aside). A
//     write not so certain is asked about as before: a word that is not
//     a literal, a ~, a path out of the workspace or with "..", a
//     relative path on a line that changes folder (changesDirectory;
//     find -execdir and -okdir), any on a line that may make a link (the
//     write would go through it; ln's own link does not count for ln's
//     word when it is the line's only one and ln runs once: not in a
//     loop's or a function's body nor under a wrapper, where a second
//     ln -s /tmp/o .vscode writes /tmp/o/o), and the analyzer's own names
//     (toolConfigs, lefthook's), which the worker writes; a protected
//     word the program reads (mv's or cp's source: the worker's mv
//     copies it before it fails), or that is an option's value (touch
//     -r, chmod --reference=, sed -f, cp -S) or holds an option
//     (-t.vscode, --target-directory=.vscode, which are asked as mv's
//     always were); and every word of a command whose reading is not
//     certain: an option its table does not hold (--help), a word that
//     is not a literal where an option may stand (cp $o a .vscode/s: $o
//     may be -t DIR; find's {}, which find -files0-from may start with
//     '-'), an option after an operand (POSIXLY_CORRECT makes it one:
//     cp a .vscode/s -f, sed s/x/y/ -i f), a word xargs adds or fills in,
//     a program under busybox, toybox or a package runner (npx touch runs
//     node_modules/.bin/touch), or of the name of a function the line
//     defines (mv() { …; }; mv a .vscode/s runs the function), chown or
//     chgrp with -H, -L or --dereference (links followed out of the
//     tree), install --strip-program (a program run), sed -i with a
//     suffix holding '/' (the backup elsewhere); and a line (or command)
//     that needs the person for anything else (its read-only write then
//     fails as it runs). Other programs' writes (rsync, tar -x, git's
//     --output, gcc -o, …) are asked about as before, though the worker
//     cannot make them either.
//  2. recognised recursive deletion → ConfirmDelete
//     ("builtin.recursive-delete"), with Decision.Targets: rm with -r/-R/
//     --recursive in any spelling or position (-rf, -fr, -r -f, -Rf,
//     --rec, rm x -rf) unless after --; any rm that find -exec runs; find
//     -delete; git clean unless its last word on dry runs is -n or
//     --dry-run (git refuses without -f only while clean.requireForce
//     holds, which config can turn off; any prefix of a long option
//     counts, --no-dry-run included); git rm -f (--force, any prefix)
//     unless --cached or -n (without -f git removes only files as
//     committed, which it can bring back); rsync
//     -d (--dir) or rmdir given a word that may be several (a glob,
//     a brace: rm -d ./src/*/* ./src/* ./src empties a tree deepest
//     first); rsync
//     --delete* / --del / --force / --remove-source-files, also as the
//     option -M (--remote-option, in a group: -vM--delete) hands the
//     rsync that receives, or a -M value not a literal (its target the
//     last word that is neither an option nor the value of one: not the e
//     of --exclude e, the 1 of -@ 1 or -v@ 1: every option of rsync's
//     --help that takes a separate value is listed); find running unlink, rmdir, shred, srm, wipe, a
//     trash command, gio or mv out of the workspace; srm -r, wipe -r,
//     trash-put (and kin), gio trash, remove and move, mv (read as GNU
//     getopt reads it, --t for --target-directory) to a destination
//     that is absolute, climbs (..), is a home (~) or is known only at
//     run time (the worker's /tmp goes with it), from a source so (or
//     holding an expansion), or on a line that may make a link (ln; cp
//     -a, -d, -P, -r, -s; rsync -l, -a; tar -x; git apply, am,
//     checkout, merge, pull, bisect, sparse-checkout, subtree and the
//     others that write the working tree; patch, unzip, cpio, bsdtar,
//     7z, pax, unsquashfs, unar, unrar; dpkg-deb and dpkg -x, -X, -R;
//     python -m tarfile and zipfile -e, cmake -E tar x and
//     create_symlink, jar x: an eleventh hunt; npm, pnpm, yarn and
//     bun installing or linking, whose folder dependencies are links
//     in node_modules, stow, xstow, lndir, gh repo clone: a twelfth
//     hunt) or
//     changes directory other than down a literal path (cd .., cd
//     /tmp, cd -, pushd, popd); rename (either form), rename.ul,
//     prename, file-rename and mmv, whose moves are not read (the whole
//     workspace is kept); tar
//     --recursive-unlink and --remove-files, zip -m (--move, in any
//     cluster), 7z -sdel (any case), whose inputs are not read (the
//     whole workspace is kept); go mod vendor and go work vendor -o
//     DIR, which remove DIR whole (a twelfth hunt), and go clean (but
//     -n, or cache flags with no package), which removes _obj/, *.so
//     and files named after a .go file in every package directory (the
//     whole workspace kept; plain go mod vendor stays automatic), and
//     its cache flags too (-modcache, -cache, -fuzzcache) on a line
//     that names the variable placing that cache (GOMODCACHE or
//     GOPATH, GOCACHE, GOENV: a nineteenth hunt, GOMODCACHE=$PWD/src
//     go clean -modcache removed src); cargo clean pointed away from
//     ./target (--target-dir DIR, --config, -Z, or a line naming
//     CARGO_TARGET_DIR, CARGO_BUILD_TARGET_DIR or CARGO_HOME: a
//     nineteenth hunt, cargo clean --target-dir src removed src), which
//     removes that directory whole, but -n and --dry-run;
//     scalar delete DIR, which removes the enlistment whole (a
//     nineteenth hunt);
//     systemd-tmpfiles --create, --remove, --clean or --purge (or a
//     word not a literal), whose configuration's R, D, e and L+ lines
//     remove trees (the whole workspace kept: a nineteenth hunt);
//     and the git commands that put a tree's files
//     (a commit's, the index's, a stash's) over the working tree's
//     (reset --hard, --merge, --keep; checkout with -f or any operand,
//     as a branch and a path look alike, but not -b NEW [START], and
//     checkout -p (--patch, -qp) with no operand too: an eleventh hunt;
//     checkout-index; switch -f; restore to the working tree; worktree
//     remove (ignored files go even without --force) and move;
//     sparse-checkout but list, check-rules and disable (a thirteenth
//     hunt: set, add, init and reapply remove a directory left holding
//     only ignored files, .env and the like); stash
//     push, save, pop, apply, branch; rebase, merge and pull with
//     --autostash; rebase, am, cherry-pick and revert --abort and
//     --skip, merge --abort; read-tree -u; submodule deinit -f
//     and update -f; any prefix git takes of their options: each
//     removes an untracked tree where it puts a file, and drops
//     uncommitted changes), and git apply -R and patch -R (--reverse,
//     in a group: -Rp1), which take a patch's changes out of the files
//     (git diff | git apply -R drops every uncommitted change), which
//     back up the whole workspace; cmake -E rm -r (-R, -rf) and cmake
//     -E remove_directory, as rm -r (a fourteenth hunt); cmake -E
//     rename, as mv (a fifteenth hunt; cmake3 and ctest3, CMake 3's
//     names on some systems, are cmake and ctest throughout).
//     No policy prefix makes
//     it automatic (issue 7: recursive deletion "always" needs the
//     confirmation). It subsumes a structural Approve; a structural Refuse
//     still wins.
//  3. a policy approval prefix that the words of any layer the command
//     runs under may match (below) (approval "sudo" for sudo git status;
//     "bash" for what bash -c runs) → Approve ("commands.approval[i]").
//  4. the policy's prefixes on the command's words (git's global options
//     taken out: git -c x=y --no-pager tag is git tag) and, for auto, on
//     the words of the wrappers that end in the command (auto "sudo git
//     status"): the most specific match wins, approval on a tie →
//     Approve ("commands.approval[i]"), and an auto prefix longer than
//     an approval prefix the command may match wins only where it is a
//     case of it (auto "make test" under approval "make"; not auto
//     "make test unit" for make test unit deploy under approval "make
//     deploy", nor auto "git push origin docs" for git push origin docs
//     --force under approval "git push --force", which ran unasked);
//     otherwise an auto match → Auto
//     ("commands.auto[i]"), but only if it covers the word that a
//     built-in finding of step 5 is about: auto "git" does not make git
//     push automatic, auto "git push" does; auto "bash" does not make
//     bash x.sh automatic, auto "bash x.sh" does.
//     An auto prefix matches word for word on parsed literal words (the
//     command word also by its name: /usr/bin/git is git): a word known
//     only at run time makes nothing automatic. An approval prefix is
//     a promise that what it names never runs without the person's yes,
//     so it matches when the command may be it at run time, erring
//     towards asking (prefix.go; a review: make "$x", make $(echo
//     deploy), find deploy -exec make {} \;, echo deploy | xargs make
//     and make -C . deploy each ran make deploy, which the policy lists
//     for approval, unasked): after the command word (literal, by name;
//     one that is not a literal is builtin.dynamic anyway), the
//     prefix's options and its other words (operands) are matched
//     apart. Its operands come in order, but where an option or a
//     NAME=value stands in place of the prefix's word, or the prefix's
//     word is one, the rest may come later among any words (getopt
//     permutes; an option may take the next word as its value, or hold
//     it: sudo -uroot for "sudo -u root"; make takes its variables
//     anywhere: make -j4 deploy, make -C dir deploy, make X=1 deploy).
//     For a program that runs each of its operands as a target, task
//     or goal (targetRunners: make and its kin, ninja, mvn, gradle,
//     ant, rake, just, task, mage, invoke, fab, doit, grunt, gulp, sbt,
//     scons, npm-run-all, run-s, run-p, turbo) each may be any of the
//     command's words, in any order (a review: make all deploy and make
//     test deploy ran the deploy target unasked), as the program reads
//     a target's name (make ./deploy, make .DEFAULT_GOAL=deploy: a
//     nineteenth hunt, rake deploy[prod], gradle
//     :app:deploy and its camel-case abbreviations, pTML for
//     publishToMavenLocal). That is per program, not general: most
//     programs read their first operand as a subcommand and the rest
//     as its arguments (kubectl get pod delete gets a pod named delete,
//     npm run build deploy runs the script build with the argument
//     deploy, git commit -m push commits), where a general rule would
//     ask about every argument named like a subcommand. Its options
//     may stand anywhere, in any spelling the program may read as
//     them, the program's own table of options not being known: a
//     group's letters apart, in any order and case, alone or in other
//     groups (cp -r -f, -fr, -Rfv for "cp -rf"); a short option for a
//     long one whose name starts with its letter, and the other way
//     round (git push -f for "git push --force", cp --recursive --force
//     for "cp -rf"); any start of a long option's name (GNU getopt, git
//     and argparse take a unique one: --forc) and a longer one that
//     starts NAME- (--force-with-lease and --force-if-includes for
//     --force); --NAME=VALUE as --NAME VALUE and the other way round;
//     -NAME as --NAME (Go's flag package: terraform apply
//     --auto-approve for "terraform apply -auto-approve"); -XVALUE as
//     -X VALUE (mvn -P release for "mvn deploy -Prelease"). A word known
//     only at run time (an expansion, a glob or brace, what xargs -I or
//     find -exec fills in) may be one of the prefix's words, not two
//     (hugo "$x" may be "hugo deploy" but not "hugo deploy --force"):
//     an operand unless its literal start rules it out (make "build-$x"
//     is not make deploy), an option when it starts with nothing or
//     '-'; one that may split into several words (unquoted) may be all
//     the rest of the prefix; and under xargs, the words it adds may
//     complete the prefix. Such a match needs approval as a literal one
//     does, and its reason says the command may be the prefix. An auto
//     prefix grants, so it stays literal: auto "git push --dry-run"
//     does not make git push -n or --dry automatic.
//     may be the prefix. The policy has no list of refused commands: a
//     command only possibly on a list is asked about, as every other
//     unknown in this analyzer is (builtin.dynamic), never silently run
//     and never refused for what it may not be.
//  5. built-in findings → Approve:
//     "builtin.git-push": git push (any global options, any flags),
//     git send-pack, subtree push, lfs push, svn dcommit, p4 submit, gh pr
//     merge; git remote, git stash push and the like are not pushes;
//     "builtin.publish": npm/pnpm/bun/lerna publish, npm unpublish, yarn
//     publish, yarn npm publish, cargo publish/yank, twine upload, gem
//     push/yank, poetry/uv/hatch/flit/pdm publish, mvn deploy (and
//     …:deploy, release:perform), gradle publish* (not …MavenLocal),
//     docker/podman/nerdctl push, image/manifest/compose push, build
//     --push or --output type=registry, gh release create/upload/edit/
//     delete, nuget/dotnet nuget push, helm push, vsce/ovsx publish;
//     "builtin.deploy": kubectl/oc apply, delete, create, replace, patch,
//     rollout (not status/history), scale, edit, set, exec, cp, …; helm
//     install/upgrade/uninstall/rollback; terraform/tofu apply, destroy,
//     import, state rm/mv/push, …; terragrunt; pulumi up/destroy;
//     ansible-playbook, ansible; serverless/sls, fly/flyctl, netlify,
//     firebase, cdk, sam, wrangler, eb, railway, vercel deploys; docker
//     stack deploy and service changes; gcloud/aws/az deploys;
//     "builtin.cloud-destroy": aws …delete-*/terminate-*, aws s3 rm/rb/mv,
//     aws s3 sync --delete, gcloud … delete, gcloud storage rm, gsutil
//     rm/rb/mv, az … delete, psql -c / mysql -e / mariadb -e with DROP,
//     TRUNCATE or DELETE, redis-cli flushall/flushdb, dropdb, dropuser, gh
//     repo delete;
//     "builtin.script": a shell run on a script file or on standard input
//     (curl … | sh; a literal here-document or here-string too, which is
//     walked for its deletions but needs approval: the shell reads its
//     input as it runs, and read, exec < FILE or a here-document left
//     open change what it runs next), script without -c (a shell on a
//     terminal), source and ., --rcfile, sudo -s/-i, a program named
//     by a path outside the system directories, and any command script
//     -c (--command) or unbuffer runs on a line with a |, a < or coproc anywhere in
//     its text (code strings included; no auto prefix covers it): they
//     give it a terminal whose input is theirs, the session's /dev/null
//     unless the line feeds it, and a pager or other interactive
//     program there runs what it is typed (an H12 hunt: printf
//     '!./x\n' | script -qc 'less f' /dev/null ran x; git log, man and
//     any program that pages on a terminal alike). A pipe inside
//     script's own code, which types nothing, is taken as one too;
//     "builtin.exec-option": an option that makes a program run a
//     command string: tar --checkpoint-action, -I/--use-compress-program,
//     --to-command, --info-script, -F/--new-volume-script, --rsh-command;
//     rsync -e/--rsh (but the word ssh alone: -e ssh, --rsh=ssh, -aessh;
//     a fourteenth hunt's usability finding), --rsync-path; git
//     difftool, mergetool and web--browse, which run the tool their
//     configuration names (a fourteenth hunt), and a remote helper
//     run by hand (git remote-ext and any remote-* but http, https,
//     ftp, ftps and fd: an H12 hunt, printf 'connect
//     git-upload-pack\n' | git remote-ext . ./x ran x); ssh, scp and sftp -o ProxyCommand,
//     LocalCommand, KnownHostsCommand, PKCS11Provider and the like (-oX=
//     too), -F, -I, scp/sftp -S, sftp -D; zip -TT (in any cluster:
//     -qTTcmd) and --unzip-command; split --filter, sort
//     --compress-program, install --strip-program (any prefix each);
//     man -P/--pager, -H/--html, -C/--config-file; ed and red, sqlite3
//     (their ! and .shell run commands read from standard input or
//     arguments); make --eval, a makefile from standard input (-f -,
//     /dev/stdin) and a command-line variable other than NAME=VALUE of
//     plain characters (no blank, ; $ ` quote and the like) or that
//     sets SHELL, .SHELLFLAGS, MAKEFILES, MAKEFLAGS and kin; sed's e
//     command or s///e in a script given by -e or as the first operand
//     (read as GNU sed reads it: its delimiter inside a bracket
//     expression, [/], is a character of it),
//     a script that is not a literal, or -f FILE; vi, vim, nvim, ex and
//     their kin by any name (vim.basic, vim.tiny, gvimdiff), editor,
//     sensible-editor, emacs and kak whatever their options, sudoedit
//     and sudo -e (--edit, in a group: -Ee); npm edit and npm config
//     edit (any word "edit" of npm's: npm run edit needs approval too;
//     ed and edi as npm's command), npm explore (explo and longer as
//     its command), which runs a command or a shell in a package's
//     folder, gio launch (a desktop file's Exec), cmake -P and ctest
//     -S (-SP, -SR) and --test-command, which run scripts (a
//     fourteenth hunt); npm's and pnpm's settings that name the shell
//     scripts run through, node's options, a configuration file or a
//     program (--script-shell, --node-options, --userconfig, --git and
//     the rest of nodeRunKeys, any prefix npm expands; pnpm's
//     --config.NAME; with one dash too, which npm's parser takes for
//     the setting of that name: a seventeenth hunt, npm test
//     -script-shell ./x ran ./x), given on the command line or set by npm, pnpm or
//     yarn config set (yarnPath too; npm's config by any prefix, conf
//     and con, with options before set, and every KEY VALUE after it:
//     a seventeenth hunt), and yarn's --use-yarnrc (a
//     sixteenth hunt: npm test --script-shell=./x ran ./x); gh's and
//     glab's alias set and import, extension install and exec, and
//     config set of an editor, pager or browser (a sixteenth hunt);
//     go's -toolexec, -exec, -vettool (one dash or two), -ldflags naming
//     -extld or -extar or not a literal, and go env -w (an eleventh
//     hunt: go build -toolexec=./s ran s); gcc, cc and clang by any name
//     given -wrapper, -B, -fplugin, -fpass-plugin, -Xclang -load,
//     -specs, an @FILE, --ld-path, --gcc-toolchain or -fuse-ld= a path
//     (gcc -B./ ran the workspace's as), and the linker's -plugin or an
//     @FILE through -Wl, or -Xlinker (a nineteenth hunt); ar, nm and
//     ranlib --plugin (gcc-ar, x86_64-linux-gnu-nm and kin), ld, ld.bfd
//     and ld.gold -plugin, LLVM's opt, llc, lli and bugpoint -load,
//     -load-pass-plugin and bugpoint's -exec-command and
//     -compile-command, by any version suffix (opt-14: a nineteenth
//     hunt, each loaded a shared object); openssl engine and provider,
//     -engine, -provider*, -config; kubectl --kubeconfig; cargo --config
//     and -Z; +PATH given to rustup's proxies (cargo, rustc, rustfmt and
//     the rest), a toolchain directory whose programs run (a sixteenth
//     hunt); gpg --*-program, --homedir, --options, --photo-viewer
//     and --exec-path (a nineteenth hunt); ssh-keygen -D
//     and -w, ssh-add -s and -S (a library loaded: a twelfth hunt);
//     rg --pre (a thirteenth hunt: rg --pre ./tools.sh hello ran it);
//     curl -K (--config, any prefix, -K in a group: -sK) and wget
//     --config, which read options from a file, and wget --use-askpass
//     and -e (--execute) of use_askpass or config, which run a program
//     (a thirteenth hunt: curl -sK fetch.cfg wrote .git/config, wget
//     -e use_askpass=./ask.sh ran ask.sh); and (a fourteenth hunt)
//     sdiff and diff3 --diff-program (any prefix), curl --engine (--en
//     and longer), less and pager -k (in a group), --lesskey-file,
//     --lesskey-src and --lesskey-content, and (an H12 hunt) their
//     +CMD and ++CMD other than a line number, G, g, F or a search of
//     printable characters (with a terminal, which script -c gives,
//     less runs them as typed: ! and | run a command, s writes a file;
//     script -qc "less -F '+!./x<newline>' f" /dev/null ran x),
//     ack's, ag's, bat's (batcat's) and delta's --pager (ack's in
//     any prefix, --pag: an H12 hunt), javac -J…, -Xplugin and
//     @FILE, and -cp, -classpath, --class-path, -processorpath,
//     --processor-path and --processor-module-path unless the last
//     -proc: is -proc:none (annotation processors run; since a
//     sixteenth hunt any javac that compiles without -proc:none, its
//     class path being the working directory when none is given: javac
//     X.java ran a processor the workspace held), and (a
//     fifteenth hunt) javac's and javadoc's --system JDK (but none:
//     its lib/jrt-fs.jar is loaded), javadoc's -J…, @FILE, doclets and
//     taglets (-doclet, -docletpath, -taglet, -tagletpath), and -J…
//     given to the JDK's other tools (javap, jar, jdeps, keytool, jdb,
//     jshell, whose -R… too, and the like), svn --diff-cmd, --diff3-cmd,
//     --editor-cmd, --config-option and --config-dir, hg --config,
//     --cwd and -R (--repository; any prefix), aria2c --on-* and
//     --conf-path, psql -c and mysql or mariadb -e code holding a
//     client command that runs a shell command, a program or a file
//     (psql's \!, \o, \copy, COPY … PROGRAM; mysql's system, \!,
//     pager, source; any backslash), psql -f, psql -o |CMD, mysql's
//     --pager, --defaults-* and --plugin-dir (as its my_getopt reads
//     them, - and _ alike and a loose- prefix dropped, and those of
//     mysqldump, mysqladmin and mysql's other clients: a sixteenth
//     hunt), and either reading its
//     code from standard input (no -c or -e); dc, duckdb and lftp, as
//     sqlite3; systemctl with a verb other than status, show, cat,
//     list-*, is-* and the like (link, enable, start, edit: the service
//     manager runs a unit's programs), crontab but -l (a FILE, standard
//     input, -e, -r), git maintenance start and register, which
//     schedule jobs (a fourteenth hunt); tox -x (--override, any
//     prefix), which sets the commands it runs, and mvn's
//     -Dexec.executable (-D and --define, or a property whose name is
//     not a literal), which the exec plugin runs (a sixteenth hunt);
//     and (a seventeenth hunt) just's --command (-c, in a group too),
//     --shell, --shell-arg, --clear-shell-args, --shell-command,
//     --chooser, --edit (-e) and --set (its value goes into recipe
//     lines, as make's variables do), pidstat -e PROGRAM, bpftrace -c
//     CMD and --unsafe (system()), flatpak run --command and
//     flatpak-builder --run, socat's EXEC:, SYSTEM: and SHELL:
//     addresses, netcat's -e and -c (ncat's --exec, --sh-exec,
//     --lua-exec), and vipe and vidir, which run $EDITOR; gradle -g
//     (--gradle-user-home, -Dgradle.user.home), -Dorg.gradle.* (and
//     -P, --system-prop, --project-prop), --init-script (-I) and sbt
//     -J…, -java-home, -jvm-opts, -sbt-opts, -sbt-jar and
//     -sbt-launch-dir, the command-line spellings of GRADLE_USER_HOME,
//     gradle.properties, .sbtopts and .jvmopts; (a nineteenth hunt)
//     groff, nroff, troff and pic -U (in a group too: unsafe mode, in
//     which the document's .sy, .pi, .pso and pic's sh run commands),
//     prove -e (--exec, any prefix), gpg-connect-agent -E (--exec)
//     and its --*-program, and Chromium's (chromium, google-chrome and
//     kin) --*-cmd-prefix, --*-launcher and --browser-subprocess-path;
//     "builtin.dynamic": a command word, bash -c string, eval argument or
//     wrapper option that is not a literal; an option a wrapper's table
//     does not list (an unknown letter or name, or a long option
//     abbreviated: sudo --us root, timeout --kill 5 10 CMD), for the
//     wrapper cannot be unwrapped past it; a command word that xargs -I
//     or find -exec fills in at run time ({}, or a word holding the
//     xargs -I string); a here-document with
//     expansions given to a shell; a code string that does not parse; the
//     subcommand of git or of a command with built-in rules (git $SUB,
//     kubectl $VERB) not a literal; rm given a word that is not a literal
//     where an option may stand ($f, *.o; ./*.o is fine); find, rsync or
//     git clean given an unquoted expansion there, find and rsync a
//     quoted one too ("$x" may hold -delete, -exec, --delete; the value
//     of find's -name and the like and of rsync's --exclude and the
//     like is not an option, but in a command find runs it may be ; or
//     + and end it); chmod with a mode that
//     is not a literal; SQL that is not a literal; arguments filled in at
//     run time (xargs, find -exec "x{}") for a command whose arguments
//     decide what it does (git, rm, the shells, the wrappers, the
//     commands with built-in rules; under xargs, whose words may be
//     options, also those of builtin.exec-option: a seventeenth hunt,
//     xargs tar < args ran args' --checkpoint-action); alias definitions, hash -p, enable
//     -f, shopt expand_aliases;
//     the automatic subset (strict.go): every node of the line (each
//     statement walked whole: nested expansions, [[ ]], case words and
//     patterns, for lists, arithmetic, expanding here-document bodies,
//     code strings bash -c and eval run) must stay inside it, or the
//     line needs approval:
//     "builtin.expansion": text the parser keeps as a literal that holds
//     $(, ${ or ` unescaped, outside double quotes and here-documents
//     (an extended glob's pattern: [[ x == @($(cmd)) ]], case and
//     words after shopt -s extglob, which bash expands); parameter
//     expansions other than $NAME,
//     ${NAME}, positional and special parameters, ${#NAME}, ${NAME:-W}
//     ${NAME-W} ${NAME:+W} ${NAME+W}, trims (# ## % %%), case operators
//     (^ ^^ , ,,) and ${x/p/r} (their words checked in turn): ${!…},
//     any @ operator (@P, @Q, @E, @A, @a, @K), ${x:=} ${x=} ${x:?},
//     substrings other than digits, subscripts other than digits, @ or
//     * (a literal key too: for an indexed array bash evaluates it as
//     arithmetic, and a name in it runs what its value holds);
//     "builtin.arithmetic": arithmetic ((( )), $(( )), let, for (( )),
//     [[ -eq ]] and the like, a subscript of an assignment, of an
//     array value or of a {NAME}> redirection) of more than numbers and
//     operators ($# $? $$ $! included): a name, an assignment or an
//     expansion; declare,
//     typeset or local -i; test -v, [ -v, [[ -v ]], unset of a name with
//     a subscript other than digits, @ or *;
//     "builtin.builtin-args": a word that is not a literal given to a
//     builtin that assigns, evaluates or runs code (declare typeset
//     local export readonly printf read mapfile readarray compgen
//     complete getopts wait hash enable set shopt trap bind fc history
//     source . eval unset let test [, under builtin or command too), a
//     declaration's value that is not a literal (declare a="$x"
//     evaluates a compound value when a is an array), except printf's
//     words after its format and test's and ['s quoted operands in
//     [ X ], [ OP X ], [ X OP Y ] and [ ! OP X ] (OP not -v or -R); $?,
//     $#, $$ and $! count as literals (the shell sets them to numbers);
//     "builtin.special-var": OPTIND, RANDOM, SRANDOM, HISTCMD or BASHPID, which
//     evaluate what they are given as arithmetic, set to other than a
//     number (by assignment or a for loop); printf -v, read, mapfile,
//     readarray, getopts or wait -p setting an upper-case name (bash's
//     own variables are upper-case);
//     "builtin.history": fc other than fc -l (it runs the history's
//     commands), set -H or -o histexpand, or shopt -o histexpand (!!
//     runs them);
//     "builtin.keyword": set -k or -o keyword, shopt -o keyword (an H6
//     hunt: shopt -so keyword; ls PATH=. ran ./ls), or a shell started with
//     either (NAME=value arguments of later commands become
//     assignments to their environment: BASH_ENV=./x);
//     "builtin.dynamic" also: a shell started with an option other than
//     -c -e -u -x -v -l -a -f -C -k -n (with - or +), -o pipefail,
//     errexit, nounset, xtrace, verbose, noclobber, noglob, allexport,
//     keyword or noexec, -O extglob, globstar, nullglob, dotglob,
//     failglob, nocaseglob, lastpipe or inherit_errexit, --norc,
//     --noprofile, --login, --noediting, --verbose, --restricted (-i,
//     -H, -o history, -s need approval); the last of -n, +n, -o noexec
//     and +o noexec decides whether it runs its script.
//  6. otherwise Auto ("default").
//
// Decided on purpose: npm run publish-docs (and any npm run, make TARGET,
// cargo run) is Auto: it runs a script of the project's, which the
// analyzer cannot see, like any program; the policy's approval list is
// the place for such names ("make deploy"). python -m twine upload is
// Auto for the same reason (only twine as a command word is recognised).
// git clean without -d is a recursive delete too: it removes untracked
// files across the whole tree. aws s3 rm without --recursive is
// cloud-destroy: a single object is as unrecoverable.
//
// # Guarantees
//
//   - Bounded input: more than MaxSize (64 KiB) bytes, a NUL byte, nesting
//     deeper than MaxDepth (64; a bracket pre-scan refuses deeper
//     brackets before the parser runs), more than MaxDepth wrappers on one
//     command, more than MaxCommands (10000) simple commands, more than
//     MaxWords (262144) words in all, each command's counted with those
//     of the wrappers and strings it runs under (eval's words go with
//     every command eval runs), or more than 512 KiB of code to parse in
//     all, each string run as code (eval, bash -c; sh -c's twice more)
//     counted again (an H6 hunt: eval given 9000 commands took 33 s
//     and 60 evals before 30000 words 37 s of the component's CPU), is
//     an
//     error (ErrTooLarge, ErrNUL, ErrTooDeep, ErrTooMany), never a partial
//     analysis; so is input that does not parse (ErrSyntax), a
//     comment whose line ends in a backslash (bash ends the comment
//     there and runs the next line, which the parser joins to it), and
//     a comment whose # follows anything but a blank, a newline or one
//     of ; & | ( ` (bash reads x=(a)#x as one word and runs the rest of
//     the line, which the parser took as a comment; after a subshell's
//     ) the two agree, but it is refused alike, and so is a # after a
//     carriage return); in a code string a shell runs, either makes
//     the command need approval. Long && || |
//     chains and long arithmetic are walked iteratively, not recursively.
//     No input panics (FuzzAnalyze).
//   - Deterministic: the same input and policy give the same analysis and
//     decision.
//   - Fail-closed where the analyzer cannot see: what is not a literal
//     where it decides what runs needs approval; an unparseable code
//     string inside a command makes that command dynamic; a shell reading
//     a file or standard input needs approval.
//   - Every decision names its rule, a reason and the command's text;
//     DecideEach gives every command's decision, for a caller that shows
//     the person all of them.
//
// # Limits
//
// What cannot be seen statically, or is not attempted:
//
//   - Scripts and programs a command runs: bash script.sh, ./build.sh and
//     source are Approve unless auto-listed; but make, npm run, cargo
//     run, go generate, pytest, python/node/perl code (python -c '…'
//     included) and anything else a program does are not analysed: the
//     stage-2 confinement of the worker is the boundary, not this
//     analysis. Remote commands (ssh host 'cmd', docker exec, kubectl
//     exec's command) are not analysed either.
//   - Aliases and functions defined outside the command line: aliases are
//     not expanded (non-interactive bash does not either; alias
//     definitions need approval); a function defined in the same line is
//     analysed by its body; functions or aliases defined at run time from
//     variables (eval "$def") are dynamic; git aliases defined in
//     configuration (git p for git push) are not resolved — writing
//     alias.* needs approval.
//   - Values of variables: a variable set earlier in the line is not
//     tracked (X=push; git $X is caught only because the subcommand is
//     not a literal; rm -rf "$D" is a ConfirmDelete whose target is "$D"
//     until run time): .gi$x/config is not seen as .git. Globs are not
//     expanded against the files; a glob in a path is matched against
//     the protected names only. The structural.authority check is
//     textual: a glob naming the launcher's paths is not refused (the
//     worker's sandbox covers each that its policy's paths reach, so
//     that no command line opens it: launcher.MaskPlan).
//   - The working directory is not tracked: cd .git; cd hooks; echo x >
//     pre-commit writes a hook unseen (cd .git/hooks is caught). Path
//     checks are textual (no symlinks, no ..): fs and the confinement are
//     the real protection of those paths; this is defence in depth and a
//     clear message. Bare repositories (x.git/hooks) are not covered.
//   - Which words mv, cp, install, ln, tee, touch, mkdir, truncate,
//     chmod, chown, chgrp, sed -i and dd write (a refusal of a write the
//     worker cannot make) is read from GNU coreutils 9.1's and GNU sed
//     4.9's option tables (Debian 12's). An option another version adds
//     is not in them, so its command is asked about; a program of
//     another kind found first on the worker's PATH, reading its words
//     otherwise, could be refused a write it could make (never allowed
//     one: the refusal stands where the person would have been asked).
//   - Prefixes are matched by the shapes most programs share, not by
//     each program's own argument syntax, which the analyzer does not
//     know beyond git's global options. An approval prefix over-matches
//     on purpose: a word after an option may be that option's value
//     (make -C deploy all, make --file=deploy, make -C "$d" test for
//     "make deploy"), a short option may be another long option with
//     the same initial (mkdocs gh-deploy -f mkdocs.yml, whose -f is
//     --config-file, for "mkdocs gh-deploy --force"), a start of a long
//     option may be ambiguous to the program (git push --f), words after
//     "--" are still read as options (cp -- -rf x for "cp -rf"), and an
//     unknown word may be anything. A few programs' own tables are
//     known (aliases.go, each from the program's help or source on this
//     machine where it is installed): another name of a subcommand,
//     either way round (subcommandAliases: npm's aliases, typos,
//     abbreviations and camel case, npm rum deploy or npm runScript
//     deploy for "npm run deploy", npm pub for "npm publish", which
//     builtin.publish reads too; cargo b, c, d, r, t, rm; docker's short
//     forms, docker rm for "docker container rm" and back; podman's,
//     nerdctl's, pnpm's and bun's from their documentation only), a
//     package script run without run (yarn, pnpm and bun: yarn deploy
//     for "yarn run deploy"), kubectl's and oc's resource types in their
//     other spellings (resourceAliases: kubectl get secrets, secret/db,
//     Secrets, pods,secrets or secrets.v1 for "kubectl get secret"), and
//     options whose letter does not start their long name or that are
//     several at once (optionSynonyms, optionImplies: tar -x or tar xf
//     for "tar --extract", curl -T for --upload-file, git switch -C for
//     --force-create, git branch -D for --delete --force, cp -a for -R).
//     These over-match too: a start of a name npm finds ambiguous (npm p
//     for "npm publish"), yarn install for "yarn run install", a word
//     known only at run time that may be a one-word spelling (docker -H
//     "$h" push for "docker container rm"), and the longest prefix is
//     the one with the most words as written. It does not see: another
//     program's other names of a subcommand or its short options whose
//     letter does not start the long name (list each spelling),
//     user-defined aliases (cargo's [alias] in .cargo/config.toml; git's,
//     above), bare yarn as yarn install, a resource type outside the table
//     (a custom resource's short name, which the cluster defines), a
//     script run without run under an approval of "yarn run" alone (list
//     the script: "yarn run deploy"), git's +REFSPEC, which forces one
//     ref (git push origin +main for "git push --force";
//     builtin.git-push asks anyway), a target a target runs (make all
//     runs deploy when all depends on it: list that target too, or
//     "make" for approval to be asked about every make), and a program
//     outside targetRunners that runs several of its operands (mix do,
//     lein do), whose prefixes are matched in order. Built-in
//     subcommand detection skips options heuristically (a word after an
//     option without '=' may be its value) and can over-match (terraform
//     -var x=apply plan is not apply, but a flag's value named like a
//     risky subcommand may be).
//   - Wrappers not in the table and not in opaqueRunners are not known
//     as such: a program that runs its arguments as a command and is
//     named nowhere here runs them unseen. The programs whose options
//     run command strings are those of builtin.exec-option; others
//     (awk's system(), python -c, a makefile's recipes) are programs
//     like any other. make CFLAGS="-O2 -g" needs approval (a blank in
//     a value), the cost of reading make's variables strictly. git -C
//     into a repository an earlier line made is not seen as one.
//   - Only the deletions listed above are recognised: mv onto an
//     existing directory, or into a link an earlier line made (the
//     analyzer reads no file) or a program on the line makes that is
//     not named above (python -c 'os.symlink(…)', perl -e, node -e, a
//     build script; ar makes no links), truncate, dd and shell redirections that
//     overwrite files are Auto unless the policy says otherwise. git
//     switch, merge, pull, rebase, cherry-pick and the like are Auto:
//     git refuses to overwrite untracked files and local changes, but
//     takes ignored files as expendable, so a branch that tracks a file
//     where an ignored one stands (.env, a build directory) replaces it
//     (a hunt). Commit what must not be lost, or keep it out of the
//     workspace.
//   - env -S with quotes or expansions in its string is dynamic rather
//     than split (a plain string is split on ASCII white space only, as
//     GNU env splits it); $'…' with escapes is treated as not a literal rather
//     than decoded.
//   - An option a wrapper's table does not list makes the line need
//     approval, not the delete confirmation: the command after it is
//     not known, so timeout --kill 5 10 rm -rf src, once approved, runs
//     without a backup. The options of a program that runs a
//     subcommand's command are read only after the subcommand (npm exec
//     --yes CMD); an option (or a word that is not a literal) before it,
//     with a runner's subcommand name later on the line (npm --silent
//     exec CMD, pnpm -r exec CMD, uv -q run CMD), makes the line need
//     approval, since which word is the subcommand is not known. To pnpm
//     and yarn any word that is none of their commands is such a name;
//     their global options most given are read, so that only their
//     command is looked at (pnpm -r add x is automatic, pnpm -r build,
//     pnpm --filter web build, pnpm recursive exec and yarn workspaces
//     foreach run need approval: they run in each package's folder).
//   - Code bash makes of strings at run time: aliases (set -o posix,
//     shopt expand_aliases, BASH_ALIASES), PS4 and PROMPT_COMMAND, also
//     set by ${NAME:=…}, and ${x@P} need approval (builtin.shell-eval);
//     so do mapfile -C and compgen -C, -F and -W, and quoted text with
//     a $ or ` in it (or a $'…' with escapes) given to a builtin that
//     evaluates it as a name, subscript, compound value or arithmetic
//     (declare 'a[$(cmd)]=1',
//     declare -a 'a=($(cmd))', printf -v, read, test -v, let, [[ -v ]],
//     [[ -eq ]], (( ))), and, anywhere on the line (a word, a value, a
//     here-string or here-document, a for loop's list), quoted text with
//     a command substitution in an array subscript or a compound value
//     (OPTIND='a[$(cmd)]': an integer variable evaluates what it is
//     given). A variable's value used in arithmetic is covered by the
//     automatic subset (step 5): $((x)), [[ $x -eq 1 ]], let, ${a[k]},
//     ${x:n} and declare -i, which evaluate a value as an expression
//     and run the command substitutions of a subscript in it
//     (x='a[$(rm -rf src)]'; echo $((x))), need approval. An unquoted
//     here-document a line of which, joined to the next at a trailing
//     backslash as bash joins it, is the delimiter does not parse (bash
//     would end it there and run the rest); nor does a here-document
//     inside $( ), ` ` or <( ) a line of which starts with its
//     delimiter (bash 5.2 ends it at "EOF)").
//     Such a command, like a program that deletes on its own (python -c
//     'shutil.rmtree(...)'), is not a recognised deletion: it runs
//     without the confirmation and the backup. The worker's confinement
//     (no network, protected paths read-only) is the boundary; the
//     analyzer is the person's early warning.
//
// # The component
//
// Main is the bash process (component.go): it confines itself to no
// files, no new sockets and no exec, then serves one operation, run, to
// the agent alone. Broker.Handle decides the line and then: Refuse, a
// denial naming the rule (a line that needs the person only for writes
// its worker could not make, by redirection or mv, is one: no question
// is put); Approve, the person is asked with the whole
// command quoted (a newline or a control character cannot hide a part;
// a line too long to show is refused rather than shown in part);
// ConfirmDelete, a separate "delete" confirmation naming what is kept,
// then fs backs up each target's literal leading directory (BackupRoots;
// after a cd or a GIT_* variable (GIT_WORK_TREE, GIT_DIR) anywhere on
// the line, env -C in any group of short options (-iCsub), a wrapper's
// option that runs its command in another folder (npm exec -w, uv and
// poetry run --directory, sudo -D, systemd-run --working-directory,
// yarn workspace NAME: a sixteenth hunt; sudo -i and --login, pkexec
// without --keep-cwd and firejail --private-cwd, and a deletion xargs
// adds words to: a seventeenth), a git global
// option other than -P, -p, --no-pager, --paginate, --no-optional-locks,
// --no-advice, --literal-pathspecs and --no-replace-objects
// (--icase-pathspecs, -c core.worktree=…), when the line runs anything but its deletions, or for a
// target with ".." after a name or outside the workspace, /tmp and
// /dev/shm included, the whole workspace), and a target
// with no room needs the "irreversible" word; any other backup failure
// runs nothing. What may run is sent to the launcher (the runner
// channel), which runs it in a confined worker and returns its exit
// status and capped output (see components/session). A failure to make
// the worker is an error; nothing is retried another way.
package bash
