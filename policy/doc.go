// Package policy owns the pinfold policy: its TOML v1 schema, a strict
// decoder, the named validation checks, the live file-system checks, advice,
// and the sha256 pin.
//
// # Reading as it binds
//
// Decoding happens in stages, each refusing with the line and key:
//
//  1. The raw bytes: at most MaxFileSize, valid UTF-8, and every character
//     printable (tab and newline aside) — comments included, because a
//     bidirectional control in a comment can reorder how the rules around it
//     display (SR-12, SR-15, SR-16).
//  2. TOML syntax, by github.com/BurntSushi/toml (duplicate keys are errors
//     there, SR-13).
//  3. The schema walk: the parsed tree is checked against the Policy struct
//     before any typed decoding. Keys must match exactly. This differs from
//     DESIGN.md's sketch of relying on MetaData.Undecoded: the library also
//     matches keys case-insensitively, so "Files" and "files" would both bind
//     one field and the later would win silently; walking the tree ourselves
//     refuses that, reports every problem rather than the first, and reports
//     them in file order rather than the library's map order.
//  4. The typed decode, then the named checks of validate.go (Checks lists
//     them), each saying what is impossible and why.
//
// CheckLive then checks the policy against the file system (SR-02), and
// Advice lists what does not block a launch but a careful person should see;
// HardLinked and GitUnreadable add what only the live file system shows (a
// write path's hard-linked files; a git system file, such as /etc/gitconfig,
// that exists but no path reaches, on which git stops), for policy check.
//
// Access is what the policy lists: write grants read and write, exec grants
// read and execute, and the workspace gets nothing implicitly. No write
// path is /proc, /sys or /dev, lies beneath /proc or /sys, or contains one
// of them (kernel-tree-write): their files are the kernel's interfaces,
// and an unprivileged launch would give the agent a writable clone of
// the host's tree (a person's delegated cgroup files are in /sys); device
// files beneath /dev are listed one by one.
//
// # Limitations
//
//   - CheckLive is a check at one moment. Between it and the moment the
//     launcher opens the paths, a process of the same user could swap a
//     directory for a symlink; the launcher must open write paths component by
//     component without following links, not trust this check alone.
//   - CheckLive sees symlinks, not bind mounts: a write path that is the
//     target of a bind mount still "resolves elsewhere" in a sense this
//     package does not detect.
//   - Line numbers for keys inside an array of tables ([[secrets]]) come from
//     the element's header when the TOML library's own record (which keeps the
//     last definition of a key only) points elsewhere.
//   - Each line number costs a decode of the whole file, so at most 32
//     distinct keys are located; a file with more problem keys than that
//     gets the rest reported without a line.
//   - Domain rules accept only lower-case ASCII names; internationalised
//     names must be written as xn-- labels.
package policy
