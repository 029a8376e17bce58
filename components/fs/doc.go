// Package fs is the agent's brokered file access (DESIGN.md §5): the
// component that reads and changes the workspace on the agent's (and
// bash's) behalf, and answers every request with a decision.
//
// Root is the workspace as a directory descriptor, with the operations as
// plain methods: Stat, Read, Write, List, Mkdir, Rename, Delete and
// DeleteRecursive. Register serves them over rpc
// as "stat", "read", "write", "list", "mkdir", "rename", "delete" and
// "delete-recursive"; Client is the typed caller. File contents travel as
// the frames' raw data, never in JSON. Main is the fs process.
//
// # Guarantees
//
//   - Paths are workspace-relative strings, checked before anything is
//     looked up: non-empty, at most 4096 bytes, valid UTF-8, no NUL, not
//     absolute, already clean, no ".." component ("." is the workspace).
//   - Every path is resolved by openat2 beneath the root descriptor with
//     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
//     RESOLVE_NO_XDEV, afresh on every operation: no symbolic link is
//     followed anywhere in a path (not even one that stays inside), no
//     mount point is crossed, nothing resolves above the root. No string
//     is ever joined into a host path. Mutations open the parent directory
//     that way and act on the final name with *at system calls (mkdirat,
//     unlinkat, renameat2), so a directory swapped for a link between two
//     operations is refused by the second, and one swapped during an
//     operation is not followed.
//   - Stat and List describe a symbolic link as a link; Delete and Rename
//     act on the link itself, never on its target.
//   - Read opens regular files only: it looks first with O_PATH (a device
//     is not opened), then opens O_RDONLY|O_NOFOLLOW|O_NONBLOCK (a FIFO
//     swapped in cannot block) and checks the type of what it opened. On
//     a root whose mount is nodev (the fs component's, as the launcher
//     mounts it; lookups never leave that mount) the kernel refuses to
//     open a device before its driver sees the open, so the look is made
//     only to explain a refused open: three system calls fewer a read. At
//     most MaxData (1 MiB, rpc.MaxData) per read, with an end-of-file flag.
//   - Write is atomic: a temporary file (TempPrefix, random, O_EXCL) in
//     the target's directory, written, fsynced, renamed onto the name
//     (RENAME_NOREPLACE when create-only), then the directory fsynced. A
//     reader sees the old content or the new one; a failed write removes
//     its temporary file. The new file has the old one's permission bits
//     without setuid, setgid or sticky, or 0644 when new: fs never makes a
//     file executable that was not. Since the name is replaced, a write
//     never changes another name's file (a hard link's other names keep
//     the old content).
//   - Delete removes a file or an empty directory; Rename refuses an
//     existing destination unless asked to overwrite. Even approved, a
//     rename into a protected path moves only regular files with one
//     name and directories holding nothing else: no hard-linked file,
//     symbolic link, FIFO, socket or device (whose content another name
//     or a writer would change with no question), nor a tree holding one
//     or one it cannot look through whole (maxLinkCheck entries).
//   - Protected paths: no write, mkdir, delete or rename touches a
//     protected path or anything beneath it (decision rule
//     "fs.protected"). Built in, at any depth: .ssh, .vscode, .mcp.json,
//     the shell start-up files (.profile, .bashrc, .bash_profile,
//     .bash_login, .bash_logout, .bash_aliases (Debian's .bashrc sources
//     it), .zshrc, .zshenv, .zprofile, .zlogin,
//     .zlogout, .cshrc, .tcshrc, .login, .logout, .kshrc, .mkshrc),
//     .gitconfig and .config/git; and, anywhere beneath a .git
//     directory, hooks, config, config.worktree and commondir (so
//     submodules' .git/modules/NAME/hooks and worktrees'
//     .git/worktrees/NAME/config.worktree too), and everything else
//     beneath a .git: git resumes from that state, and a rebase's todo
//     list runs its exec lines on git rebase --continue (as bash holds
//     it, rule structural.git-state). A lock file there (NAME.lock) may
//     be deleted unasked (a git that died leaves index.lock), but not
//     written or made: git renames a lock it holds onto the file it
//     locks (git commit -a holds index.lock while the person writes the
//     message), so a lock replaced meanwhile became that file. So is
//     NAME.lock beside any protected NAME (git config --global's
//     .gitconfig.lock, git init --bare's NAME.git/config.lock), in a
//     case-insensitive directory under any name the kernel takes for
//     it (NAME.LOCK). A git
//     directory known by what it holds rather than its name (gitLayouts,
//     git's own test: HEAD, objects and refs, a bare repository however
//     named; HEAD and commondir; or objects and refs, which a commondir
//     may name) is a .git the same way, the file system looked at for
//     each directory on the path; making the last name of such a set
//     beside the others (a refs beside objects) is protected too, and
//     its question says which directory would become a repository. A
//     NAME.git's hooks, config, config.worktree and commondir are
//     protected before it holds a repository (git init --bare keeps
//     them). The bootstrap adds the policy's own list. A rename is also refused when either end is an
//     ancestor of a protected path (anything with a .git component, a
//     .config, a NAME.git, a git directory by its layout or anything in
//     one, a directory of a bootstrap path), and a write of a file named .git (a
//     gitdir pointer) is refused: both would otherwise make protected
//     content by moving unprotected content into place. Reads of
//     protected paths are allowed. Names match per component, case
//     sensitively, unless the parent directory is case-insensitive
//     (FS_CASEFOLD_FL), where they match as the kernel compares there:
//     NFD and the full Unicode case folding ("con\ufb01g" is "config",
//     ".\u00dfh" is ".ssh"), default-ignorable code points dropped.
//   - Hidden paths (Root.Hide): where the launcher's own files lie in the
//     workspace (the policy file, the vault and its lock, a key file,
//     the session and backup directories; named both as given and with
//     links resolved), fs neither reads, lists, changes nor removes them
//     or anything beneath, and neither renames nor removes a directory
//     that holds one, which would serve it under another name (no
//     approval can allow either: rule "fs.authority"). A
//     backup bash asks for of a tree that holds one leaves it out. Their names
//     compare ignoring case (fully folded, as above), so a
//     case-insensitive directory cannot serve them under another name.
//   - Decisions: allowed under rule "workspace"; a path that would leave
//     the workspace (a link, a mount point) is no-rule "fs.beneath"; a
//     missing file is unknown; a malformed path or argument, or a request
//     that does not fit what is there, is bad-request; a refusal of the
//     file system itself (EACCES, EPERM, EROFS) is no-rule
//     "fs.permission". Details name the operation, the path and the cause,
//     never file contents. Only the agent and bash are served: the
//     handlers check the caller's role again after the handshake did.
//   - The process (Main) is not dumpable from its first instruction,
//     reads its credential from a pipe (fd 3), serves a listening Unix
//     socket (fd 4, and fd 6 when the launcher also hands it the agent's
//     TCP listener), works on the workspace descriptor (fd 5), then
//     confines itself with launcher.ConfineComponent: Landlock allows
//     reading and writing beneath fd 5 only (the rule's path is
//     /proc/self/fd/5/., see main.go), no sockets, no exec. It refuses to
//     serve if, confined, it cannot resolve its root.
//
// # Limitations
//
//   - A hard link inside the workspace to a file outside it is, to path
//     resolution, an ordinary file of the workspace: Read returns the
//     outside file's content. Nothing at the path level can tell; only
//     how the workspace is populated can (the launcher's idmapped clone,
//     and protected_hardlinks for links the agent might make). Writes and
//     deletes are safe: they replace or remove the name only.
//   - A mutation of a protected path (or of an ancestor of one, for
//     renames and recursive deletes) goes ahead only with the person's
//     approval (Root.Approve: the launcher's terminal, over the session's
//     approval channel); without a channel it is refused. After such a
//     change (not a removal), fs asks the launcher over the same channel
//     to read the workspace's git configs again (Root.Refresh: fs cannot
//     read the person's own configs) and protects what they name from
//     then on, holding its other changes until then (Root.gate). The
//     person may also edit a config themselves during the session (git
//     config core.hooksPath .githooks in their own shell, an editor
//     saving by rename, an included file or a ~/.gitconfig made, git
//     init where the workspace had no repository): the launcher watches,
//     with inotify, each config file its last read read or looked for
//     (the repositories' config and config.worktree, what they include,
//     the .git, commondir and gitdir files that lead to them, the
//     person's global ones, the workspace's own .git/config) and the
//     directory each lies in, or the nearest one above that exists, and
//     hands fs the inotify descriptor (fd 10). Before each change but a
//     removal, fs asks the kernel whether an event waits (Root.Stale:
//     one ioctl, FIONREAD, under the shared gate) and reads those that
//     do (ConfigNews); if one concerns a config (a watched file's own, or
//     one about a name the launcher said leads to a config in that
//     directory: config in a .git, .git in a working tree's root, an
//     included file's name), it has the launcher read the
//     configs again (Root.Recheck, over the same channel, holding the
//     gate exclusively), and the change is checked against what they
//     name then. Other events (a file made beside a config, git's lock
//     files, fs's own writes in a watched workspace root, a file named
//     config where only a .git leads to one) cost a read. A recheck
//     walks the whole workspace (as at the start, at most
//     MaxProtectedWalk entries): some 0.1 s for 2,000 directories and
//     200 repositories, during which fs's other changes wait (reads do
//     not). The agent can cause one with no approval by making or
//     removing a name on the way to a config that does not exist yet
//     (a directory an included file would lie in), or by filling the
//     watch's queue (some 16,384 events in the directories watched,
//     between two of fs's changes), each costing one walk. Past 8,192
//     names on the way (some 2,000 repositories), the launcher says each
//     name for every directory watched, and any file so named (config)
//     costs one too.
//     The kernel queues an event within the system call that edits,
//     makes, renames or removes the file, so a change fs is asked for
//     after the edit is checked against the edited config. A recheck
//     that gets no answer refuses the change, saying so, and the next
//     change asks again; a config read but not understood (git refuses
//     it too) is said on the launcher's terminal and in fs's log, as at
//     the start. fs gets the channel and the watch also when nobody can
//     be asked (Bootstrap.Ask false: every protected change is then
//     refused). Not seen until the configs are next read (an approved
//     change, a recheck another event causes, and before each command,
//     which reads them itself): a repository made below the workspace's
//     root during the session (git init in a subdirectory; a commondir
//     a new .git file names), whose directories were not watched; an
//     edit through a shared writable mapping, which queues no event; a
//     config whose watch could not be added (fs.inotify.max_user_watches
//     reached: said on the terminal as not watched). A
//     recursive delete (Root.Recursive) is confirmed separately (the word
//     "delete"), backed up and verified first (package backup), and,
//     when no backup fits, needs a second, irreversible confirmation;
//     without a store or a channel it is refused. In a directory that
//     folds case the question may be asked twice (once per spelling
//     check).
//   - Files outside the list that tools execute (.envrc, Makefile,
//     package.json scripts) are not protected: the policy's protected
//     list is the place for those.
//   - What the git configs name (gitconfig.go: ProtectedMounts,
//     GitConfigNamedIn, ProtectedNow) is read from the values as
//     written, not from what git runs. A value git runs by the shell
//     (any but gpg.program, which git runs whole with no shell,
//     core.hooksPath, a directory taken whole, and the URLs, refs and
//     paths of notPrograms) names every word of every command the shell
//     runs in it (after ;, &&, |, a newline, inside $(…) and `…`),
//     quotes and backslashes taken away, that holds a slash and is no
//     URL or ref: each command's name, and each word given to one, which
//     may be what runs (sh .githooks/mon.sh, env tools/ssh, python3
//     tools/conv.py) or anything else (git log origin/main..x). A word
//     given to a program is mounted read-only in wrapper mode only where
//     it is a file at the start, and not said as uncovered where it is
//     not there (one the agent makes is named when the launch ends,
//     ProtectedMade); in components mode it is protected, there or not;
//     a directory given to one is neither. So a file a value gives to a
//     program (an alias's !gofmt -w src/a.go) is read-only for a
//     wrapper-mode agent and for components mode's commands, and fs asks
//     before changing it, though git only hands it on. Not read: a word
//     an expansion or a glob makes known only when the shell runs it
//     ($HOME/x, "$X", tools/*.sh, the word a $(…) stands in; the command
//     inside it is read), a program named without a slash (found by
//     PATH), and what a named program or script runs in turn. An alias
//     without ! (git's own command, split as git splits it, run with no
//     shell) names its first word, what its -c options name as config
//     would, and the programs git's own commands run from its options
//     and arguments, read as sh reads them (aliasWords; git 2.39 runs
//     each): rebase's -x/--exec, difftool's -x/--extcmd, grep's
//     -O/--open-files-in-pager, fetch's, pull's, clone's (-u) and
//     ls-remote's --upload-pack, push's --receive-pack, push's,
//     ls-remote's and archive's --exec, filter-branch's --*-filter and
//     --setup (each spelled as parse-options takes it: --exec=x, a
//     prefix such as --ex, -xtools/x, -ix tools/x), bisect run's command
//     and submodule foreach's; through the aliases it names in turn,
//     the repository's and the person's (alias.x = base --exec tools/x,
//     alias.base = rebase). Other commands' options (git send-email's
//     --sendmail-cmd, a tool a difftool or mergetool --tool names, which
//     is config) are not read. Three run elsewhere than the working
//     tree's root: grep's pager in the directory git grep is run from,
//     submodule foreach in each submodule (which the agent may make),
//     filter-branch's filters in its temporary tree (.git-rewrite/t,
//     filled with a commit's files for --tree-filter); a relative word
//     there is named at the root (for filter-branch, in .git-rewrite/t,
//     so that ../../tools/x is the root's tools/x) and said as not
//     covered where else it runs. A ~ is read as sh reads it: expanded
//     only where no character of its prefix (up to and with the first
//     slash) is quoted, otherwise ("~/x", '~/x', \~/x, ~"/x") a
//     directory ~ in the working directory, named there (git 2.39 and
//     dash run ./~/x for sh "~/x"). A config file's own quotes are taken
//     away before git or sh sees the value (hooksPath = "~/hooks" is
//     $HOME/hooks to git); a pathname value's leading ~ git expands
//     itself, before any shell (core.fsmonitor = ~/mon).
//   - A path's leading ~ is expanded as git (a pathname value) and sh (a
//     word) expand it: ~ and ~/ as $HOME, ~user as that user's home,
//     read from /etc/passwd alone (os/user is not imported): a user it
//     does not hold (a network directory's, which getpwnam would ask) is
//     said as not covered, never taken for a path in the working tree
//     (git, too, refuses a pathname value whose user it cannot find). A
//     value's leading %(prefix)/ (git 2.35 on) is git's install prefix:
//     Debian's git's, /usr (git 2.39.5 says /usr/x for %(prefix)/x), and
//     that of the git on $PATH (its bin directory's parent) where it is
//     another; a git elsewhere (another prefix not on $PATH, one built
//     with RUNTIME_PREFIX and moved) is not known. It is expanded in
//     every value, over-reaching: git expands it in pathname values
//     (core.hooksPath, include.path, core.fsmonitor), and sh refuses the
//     parenthesis elsewhere. git 2.39 runs gpg.program as written, ~ and
//     all: both the working tree's ~ and home's are named.
//   - A git directory by its layout is found by looking, before the
//     operation: a command bash runs meanwhile could complete a layout
//     between the look and the write (the launcher's check after each
//     command, ProtectedNamesIn, finds the hooks and config it left in
//     one). fs's own changes that could complete one (a name of a
//     layout, any rename) run one at a time, from the look to the
//     change, so two requests at once cannot each miss the other's. A NAME.git that holds no repository protects only its
//     hooks, config, config.worktree and commondir; a directory of
//     another name that is only a part of a layout (HEAD alone)
//     protects nothing, and asks only when the layout is completed. A
//     directory that holds objects and refs for reasons of its own is
//     taken for a git directory (git takes it for one when a commondir
//     names it, and HEAD is not required then): every change beneath it
//     asks, and the refusal and the question name it. The
//     bash analyzer (package bash) matches .git components only: a
//     command naming NAME.git/hooks or docs/config of a bare repository
//     is not flagged there; ProtectedIn's read-only mounts (which find
//     bare repositories as fs does) are what stop its write, and a
//     repository a command makes has its new hooks and config moved
//     aside after it, as a new .git's are.
//   - Case-insensitive directories: only the target's parent directory is
//     asked whether it folds case. A non-folding directory inside a
//     folding one (chattr -F on an empty directory) is matched case
//     sensitively below it. ProtectedIn and ProtectedNamesIn (bash's
//     read-only mounts) ask every directory they walk, and match its
//     names the same way. This kernel has no casefold support, so the
//     ioctl path was not exercised by the tests; the folded matching was.
//   - A listing stops at MaxList (10000) entries, read in directory order
//     and then sorted, with the truncated flag: a truncated listing is a
//     subset, not the first names in order. Names that are not valid
//     UTF-8 are listed with U+FFFD in place of the bad bytes by JSON, and
//     cannot be addressed (paths must be UTF-8).
//   - fs removes a write's temporary file when the write fails, but not when
//     fs itself is killed mid-write: a TempPrefix file may then remain.
//     Temporary files are visible in listings while a write runs.
//   - Mkdir's 0755 is less the process's umask. A written file takes the
//     fs process's uid (the workspace owner through the idmapped mount),
//     not the old file's owner.
//   - The guarantee is "beneath the root when resolved": a directory that
//     someone outside the sandbox moves out of the workspace while an
//     operation holds it open is still operated on. In production the
//     root is a detached mount clone, out of which nothing can be renamed.
//   - fs keeps openat2 under its seccomp filter (ComponentConfinement's
//     Openat2; the agent's filter refuses it): every mode fs passes is
//     its own code's, never the caller's.
package fs
