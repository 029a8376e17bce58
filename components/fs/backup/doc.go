// Package backup is the recursive-delete backup store (DESIGN.md §5, fs;
// issue 7 item 2): before a tree is deleted recursively, a copy of it is
// staged in the store and verified by hash; the person can list, show,
// verify and restore backups later.
//
// # Use
//
//	s, err := backup.Open(dir, quota)      // once; quota 0 is 3 GiB
//	b, err := s.Stage(src, label, time.Now())
//	// errors.Is(err, backup.ErrNoRoom): it does not fit (errors.As gives
//	// *NoRoomError with the sizes). When its InTheWay names older
//	// backups, it fits once they go: show the person which, and on a yes
//	// call s.StageEvicting(src, label, now, theirIDs). Otherwise the
//	// delete needs the person's second, irreversible-delete
//	// confirmation. Any other error: do not delete.
//	// Otherwise delete the tree; b.ID names the backup.
//	// s.StageLeaving(src, label, now, leave): Stage without the paths
//	// leave names (fs: the launcher's own files), as if absent.
//	s.List(); s.Show(id); s.Verify(id); s.Restore(id, dirFile, name, owner); s.Remove(id)
//
// src is a descriptor of the tree to delete as the caller resolved it:
// a directory (O_PATH|O_DIRECTORY is enough), a regular file (readable,
// or O_PATH where /proc is mounted) or a symbolic link (O_PATH|O_NOFOLLOW:
// the link is what is backed up); wrap a raw descriptor with os.NewFile.
// Restore's dst is a directory descriptor (O_PATH is enough), name a
// single file name in it, and owner (Owner) whom every restored entry
// is given to: the caller passes the workspace directory's owner.
//
// # The store
//
// A directory, made 0700 when missing. Open refuses a directory that is
// a symbolic link, belongs to another user, or that group or others can
// write, and one that is neither empty nor already a store (the marker
// file .pinfold-backups), so a wrong path never has its contents
// treated as leftovers. Everything after Open is done through a
// descriptor of the directory.
//
// Each backup is a subdirectory named by its id: the creation time in UTC
// to the nanosecond, fixed width, then 32 random bits
// ("20260102T030405.000000600Z-1a2b3c4d"), so ids sort by time. It holds
// data (the copy of the tree's root: a directory, file or link) and
// manifest.json. A backup is staged under ".stage-ID"; it is complete
// only once its manifest has been written to a temporary name, fsynced,
// renamed into place and the directory fsynced (last), and the staging
// renamed to ID. Leftovers of a crash (".stage-ID", ".del-ID" from an
// interrupted removal, an ID directory without a manifest) are removed by
// Open and by every Stage; nothing else in the directory is touched.
//
// The manifest is JSON: version (1), id, label, source (the descriptor's
// name, device and inode), created, root type, entry/file/skipped
// counts, bytes, size, tree_sha256, and entries in walk order, each with
// path ("." for the root, names joined by "/"), type, mode (07777 bits),
// mtime, uid, gid, size and sha256 (files), target (links), skipped. A
// path or target that is not valid UTF-8 is stored as path_b64 /
// target_b64, so every name round-trips byte for byte (newlines too).
//
// The stored copy holds names, contents, link targets and FIFOs; files
// are 0600 and directories 0700, owned by the store's owner (so no
// setuid file or unreadable directory ever sits in the store). Modes,
// times and owners live in the manifest only. Restore applies the
// modes without setuid and setgid (mode & 01777) and the times; the
// recorded owners are never applied (they are only shown): fs records
// them as it sees them through its idmapped mount, the workspace
// owner's files as its throwaway uid (which later sessions reuse) and
// everyone else's as 65534, so restoring them would give the person's
// files away, setuid ones included.
//
// # Guarantees
//
//   - Walks are by descriptor: each name is looked up beneath its
//     directory's descriptor with openat2 RESOLVE_BENEATH |
//     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV and
//     O_NOFOLLOW, and what was opened must be what lstat saw (device,
//     inode, type). Symbolic links are recorded with readlinkat and
//     never followed, wherever they point. A name replaced by a link
//     between its lookup and its opening is refused (ErrChanged); a
//     directory swapped for a link while it is walked is not followed
//     (the walk holds its descriptor) and the second walk sees the link
//     (ErrChanged). Names are never joined into host paths.
//   - Stage, holding the store's lock (flock on .lock): removes
//     leftovers; measures the source (a stat-only walk); plans eviction;
//     copies the tree, hashing every file (SHA-256) as it is read and
//     fsyncing every file and directory; reads the copy back from the
//     store and checks it against what was read (per entry, and the tree
//     hash); walks the source a second time, hashing again, and checks
//     it equals the first walk (path, type, mode, owner, size, content,
//     link target, and modification time but for directories); writes
//     the manifest; renames the staging to its id. Any failure removes
//     the staging and returns an error: a delete must not run then.
//   - The tree hash (tree_sha256) is SHA-256 over every kept entry, in
//     walk order, of its length-prefixed path, type, size, content hash
//     and link target.
//   - Quota: a backup counts its file bytes plus EntryCharge (4608: a block and 512) per
//     entry. Before copying, the oldest complete backups are chosen, one
//     at a time, until the source would fit the quota and the store's
//     file system's free space (estimated in blocks). A backup being
//     restored or verified (shared lock) is passed over, as is one whose
//     manifest cannot be read. They are evicted only when the caller
//     allowed each of them (StageEvicting); otherwise nothing is evicted
//     and *NoRoomError (errors.Is ErrNoRoom) names them in InTheWay.
//     When the source cannot fit even with every evictable backup gone,
//     nothing is evicted and *NoRoomError has the sizes and no InTheWay;
//     Disk says whether the quota or the disk was the limit. Incomplete
//     stagings never count (and are removed). A tree that grows after it
//     was measured is ErrChanged.
//   - The store leaves a twentieth of its file system free (at most
//     1 GiB), and a twentieth of its inodes: it lives on the host's /var,
//     and an agent chooses what is backed up; a source that needs more
//     than the free inodes allow beside that is *NoRoomError (Inodes).
//   - Deviation from DESIGN.md §5, which evicts the oldest backups first
//     by itself: an eviction the person was not shown let an agent drop
//     the backup of a tree it had deleted (with the person's yes) by
//     deleting junk of its own, sparse so it cost nothing, whose backup
//     needed the room (found by a hunt, 2026-12-01). fs now asks the
//     person, naming the backups that would go; bash's deletions never
//     evict, and are asked about as deletions without a backup; the
//     person frees room with launcher backups remove.
//   - A full disk while copying (ENOSPC, EDQUOT) is an error wrapping
//     the errno; the partial staging is removed, and no other backup is
//     touched (evictions already planned and done stay done).
//   - Verify re-reads a stored copy and checks names, types, sizes,
//     SHA-256 of every file, link targets and the tree hash against the
//     manifest, and the manifest's summary (type, counts, bytes; not
//     its quota charge) against its entries (ErrCorrupt, naming the
//     first difference).
//   - Restore builds the tree under a temporary name (RestorePrefix) in
//     dst, each entry made exclusively (O_EXCL, mkdirat, symlinkat,
//     mkfifoat), then opened once, by name with O_NOFOLLOW (a link
//     O_PATH), and checked through that descriptor to be what was made:
//     its type, this process's uid, one link, and for a directory empty
//     (else the restore fails). From then on everything about the entry
//     is done through the descriptor: contents, every file's hash
//     checked as it is copied (ErrCorrupt), owners (when root) then
//     modes then modification times (utimensat and fchownat with
//     AT_EMPTY_PATH), children before their directories: the owner is
//     the one the caller gives, for every entry, and the mode keeps
//     neither setuid nor setgid (mode & 01777, files and directories
//     alike). The tree's root stays this process's, mode 0700, until it
//     has been renamed onto name with RENAME_NOREPLACE; only then are
//     its own owner, mode and time set, through its descriptor. So
//     nothing inside the tree can be reached by another user while it
//     is built. An existing name (checked first, and again by the
//     rename) is ErrExists and nothing is changed. On any failure, the
//     root's contents are removed through its descriptor, and the
//     temporary name only while it is still that root (same device and
//     inode). The backup stays. RestoreContext fails so too when its
//     context is done before the rename (the CLI's Ctrl-C).
//   - A restore killed outright (SIGKILL, a crash) cannot remove its
//     temporary tree, root's and 0700, which the workspace's owner cannot
//     remove either: the next restore into the same directory does. A
//     tree root is locked (flock) by its restore from just after it is
//     made until it is done with it, and marked (restoreMark, a trusted
//     extended attribute, which only root can set) once locked; the mark
//     is removed before the rename into place. A restore removes, before
//     it starts, each directory in dst named RestorePrefix… that is its
//     own user's, whose lock it can take, and that is marked: by
//     descriptor, through no link, and the name only while it is still
//     that directory. Anything else so named (another user's directory,
//     an unmarked one, a file, a link) is left.
//   - Ids are checked against their exact form before any use (ErrBadID:
//     "../x" and the like never reach the file system); restore names
//     must be one file name (ErrBadName).
//   - Remove waits for a staging, fails with ErrInUse while the backup is
//     being restored or verified, and renames the backup out of the ids
//     before deleting it, so it is never seen half removed.
//
// A backup counts against the quota, per entry, EntryCharge (4608: a block and 512) plus
// the bytes of its path and link target as the manifest encodes them
// beyond the first NameAllowance (64), plus its content (a file's bytes;
// a link's target). A manifest is at most MaxManifest (64 MiB): a tree
// whose manifest would be larger does not fit (*NoRoomError with
// Manifest set, found by a measure that stops there, so the person is
// asked about an irreversible delete); a larger manifest is not read,
// and List shows it as a problem. List reads each manifest only up to
// its root entry.
//
// # Limits
//
//   - Hard links are copied as separate files and restored as such.
//   - Extended attributes, ACLs, file capabilities, security labels and
//     inode flags (chattr) are not kept; access times are not restored.
//     Owners are not restored: every entry gets the owner the caller
//     gives, and only when the process is root (otherwise the restored
//     tree belongs to the caller). Setuid and setgid are never restored.
//   - A killed restore's tree is removed only by a later restore into the
//     same directory, and only where the mark could be set (root, on a
//     file system with trusted extended attributes and flock: ext4, xfs,
//     btrfs, tmpfs; not NFS: where flock is refused, EOPNOTSUPP, ENOLCK
//     or EINVAL, the restore goes on unlocked and unmarked, and a killed
//     one's tree stays), and only a directory: a backup of one file,
//     killed, leaves a file of root's, which the workspace's owner can
//     remove.
//   - Sparse files are stored and restored dense.
//   - FIFOs are recreated (they have no content). Sockets and devices
//     are recorded in the manifest (skipped) but neither copied nor
//     restored: a socket is meaningless without its server, and making
//     devices needs privilege. Info.Skipped counts them, so the caller
//     can say so before deleting.
//   - A tree with a mount point inside is refused (EXDEV), as is a tree
//     that holds the store itself.
//   - Reading needs permission: a non-root caller cannot back up files
//     or directories it cannot read (the staging fails; nothing is lost).
//   - The source must hold still while it is staged: any change between
//     the two walks (other than a directory's time) fails the staging,
//     so a tree written to continuously cannot be backed up.
//   - Staging is serialised per store (across processes), and List and
//     Show do not wait for it.
//   - Restore still uses names in dst, which whoever can write dst may
//     change at any time: each entry is made and then opened by name
//     (the open is checked, as above, but a swap in between is refused,
//     not prevented); the final rename moves whatever is under the
//     temporary name then; and after a failure the temporary name is
//     unlinked (rmdir for a directory, which removes only an empty one)
//     after a device/inode check, so a swap in that window can remove a
//     name that the writer of dst could have removed itself. A root
//     that was made but failed its check is left in place. When the
//     workspace belongs to root (the uid Restore runs as), the checks
//     cannot tell what Restore made from what an agent made as that
//     owner, and the root's 0700 does not keep that agent out.
package backup
