package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// Test hooks.
var (
	testHookVisit      func(rel string) // the copying walk, after a name's lstat, before it is opened
	testHookAfterEvict func()           // after eviction, before the copy
	testHookAfterCopy  func()           // after the copy is checked, before the source's second walk
	testSkipDiskCheck  bool             // plan by the quota only, so a full disk shows mid-copy
)

// Stage backs up the tree beneath src and returns the complete, verified
// backup. src is a descriptor of a directory (O_PATH|O_DIRECTORY is
// enough), of a regular file (readable, or O_PATH where /proc is
// mounted) or of a symbolic link (O_PATH|O_NOFOLLOW: the link itself is
// backed up). label says why (the caller's words, e.g. the command); now
// dates the backup and makes its id.
//
// Stage evicts nothing: when the source does not fit beside the backups
// kept, it returns *NoRoomError, which names the oldest backups whose
// eviction would make room (InTheWay); StageEvicting evicts those the
// caller allows. An eviction nobody was told of would let whoever asks
// for a backup (an agent deleting junk it made) drop an older one the
// person relies on.
func (s *Store) Stage(src *os.File, label string, now time.Time) (*Backup, error) {
	return s.StageEvicting(src, label, now, nil)
}

// StageEvicting is Stage, allowed to evict the backups whose ids are in
// evict (the person was shown them): in order, holding the store's lock:
// leftovers of crashes are removed;
// the source is measured (a walk that only stats; a tree whose manifest
// would pass MaxManifest is *NoRoomError at once); the oldest complete
// backups are evicted until the source fits both the quota and the
// file system's free space, or, when that would evict a backup evict
// does not name, or cannot make room even evicting every backup that is
// not in use, *NoRoomError (ErrNoRoom) is returned
// and nothing is evicted; the tree is copied into a staging directory,
// hashing every file as it is read; the staging is walked and hashed
// again and must equal what was read (the tree hash); the source is
// walked and hashed a second time and must equal the first walk (else
// ErrChanged); the manifest is written and fsynced, last, and the staging
// renamed to its id. On any failure the staging is removed and nothing
// else is changed (evictions already done stay done).
func (s *Store) StageEvicting(src *os.File, label string, now time.Time, evict []string) (*Backup, error) {
	return s.stage(src, label, now, evict, nil)
}

// StageLeaving is Stage, with the names for which leave reports true
// (paths relative to the source, as in the manifest) left out, and what
// lies beneath them: neither measured, copied nor compared, as if absent.
// It is how fs keeps the launcher's own files out of a backup of a tree
// that holds them.
func (s *Store) StageLeaving(src *os.File, label string, now time.Time, leave func(rel string) bool) (*Backup, error) {
	return s.stage(src, label, now, nil, leave)
}

func (s *Store) stage(src *os.File, label string, now time.Time, evict []string, leave func(rel string) bool) (*Backup, error) {
	if src == nil {
		return nil, errors.New("backup: no source descriptor")
	}
	sfd := int(src.Fd())
	defer runtime.KeepAlive(src)
	var self unix.Stat_t
	if err := unix.Fstat(s.fd, &self); err != nil {
		return nil, fmt.Errorf("backup: store %s: %w", s.dir, err)
	}
	var srcSt unix.Stat_t
	if err := unix.Fstat(sfd, &srcSt); err != nil {
		return nil, fmt.Errorf("backup: the source descriptor: %w", err)
	}

	unlock, err := s.lockStore(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s.cleanup()

	var fs unix.Statfs_t
	if err := unix.Fstatfs(s.fd, &fs); err != nil {
		return nil, fmt.Errorf("backup: store %s: %w", s.dir, err)
	}
	bsize := fs.Bsize
	if bsize <= 0 {
		bsize = 4096
	}
	measure := newWalker(walkMeasure)
	measure.avoid, measure.bsize, measure.leave = &self, bsize, leave
	if err := measure.source(sfd, -1, ""); err != nil {
		if errors.Is(err, errTooBig) {
			// Stopped part way: the sizes are at least these.
			return nil, &NoRoomError{Need: measure.size, Quota: s.quota, Manifest: measure.manifest}
		}
		return nil, err
	}
	need := measure.size
	// The copy, its manifest (header included) and a block to spare, and
	// what the store leaves free on its file system besides (diskReserve).
	diskNeed := bsize + maxHeader + measure.disk + diskReserve(&fs)
	// Inodes too: an entry each, and the same share left (tmpfs and ext4
	// run out of them before bytes with many small files).
	if fs.Files > 0 && int64(fs.Ffree) < int64(measure.count)+int64(fs.Files/20) {
		return nil, &NoRoomError{Need: need, Quota: s.quota, Disk: true, DiskNeed: diskNeed, DiskFree: int64(fs.Bavail) * fs.Bsize,
			Inodes: int64(measure.count), InodesFree: int64(fs.Ffree)}
	}
	victims, err := s.plan(need, diskNeed, int64(fs.Bavail)*fs.Bsize, evict)
	if err != nil {
		return nil, err
	}
	for i, v := range victims {
		err := s.removeLocked(v.id)
		unix.Close(v.fd)
		if err != nil {
			for _, w := range victims[i+1:] {
				unix.Close(w.fd)
			}
			return nil, fmt.Errorf("backup: evicting to make room: %w", err)
		}
	}
	if testHookAfterEvict != nil {
		testHookAfterEvict()
	}

	id := newID(now)
	stage := stagePrefix + id
	if err := unix.Mkdirat(s.fd, stage, 0o700); err != nil {
		return nil, storeErr(".", err)
	}
	dfd, err := openDir(s.fd, stage)
	if err != nil {
		removeAll(s.fd, stage)
		return nil, storeErr(".", err)
	}
	done := false
	defer func() {
		unix.Close(dfd)
		if !done {
			removeAll(s.fd, stage)
			unix.Fsync(s.fd)
		}
	}()

	// The copy, hashed as it is read.
	copied := newWalker(walkCopy)
	copied.avoid, copied.limit, copied.hook, copied.leave = &self, measure.bytes, testHookVisit, leave
	if err := copied.source(sfd, dfd, dataName); err != nil {
		return nil, grewPastManifest(err)
	}
	if got := copied.size; got > need {
		return nil, changed(".", "it grew to %d bytes (with %d entries) after it was measured at %d", got, len(copied.entries), need)
	}
	if err := unix.Fsync(dfd); err != nil {
		return nil, storeErr(".", err)
	}
	// The copy, read back from the store.
	stored := newWalker(walkHash)
	if err := stored.child(dfd, dataName, ".", -1); err != nil {
		return nil, fmt.Errorf("backup: reading the staged copy back: %v", err)
	}
	if err := compareStored(copied.entries, stored.entries); err != nil {
		return nil, fmt.Errorf("backup: the staged copy differs from the source as read: %w", err)
	}
	if testHookAfterCopy != nil {
		testHookAfterCopy()
	}
	// The source again: it must not have changed since it was copied.
	again := newWalker(walkHash)
	again.avoid, again.leave = &self, leave
	if err := again.source(sfd, -1, ""); err != nil {
		return nil, grewPastManifest(err)
	}
	if err := compareSource(copied.entries, again.entries); err != nil {
		return nil, err
	}

	info := Info{
		ID:      id,
		Label:   cleanLabel(label),
		Source:  Source{Name: cleanLabel(src.Name()), Dev: srcSt.Dev, Ino: srcSt.Ino},
		Created: now.UTC(),
	}
	summarise(&info, copied.entries)
	if info.TreeSHA256 != treeHash(stored.entries) {
		return nil, fmt.Errorf("%w: the staged copy's tree hash differs from the source's", ErrCorrupt)
	}
	if info.TreeSHA256 != treeHash(again.entries) {
		return nil, changed(".", "its tree hash changed between the copy and the check")
	}
	if err := writeManifest(dfd, &manifest{Version: Version, Info: info, Entries: copied.entries}); err != nil {
		return nil, err
	}
	if err := unix.Renameat2(s.fd, stage, s.fd, id, unix.RENAME_NOREPLACE); err != nil {
		return nil, fmt.Errorf("backup: completing %s: %w", id, err)
	}
	done = true
	if err := unix.Fsync(s.fd); err != nil {
		// Complete but perhaps not durable: say so, and do not let a delete
		// rely on it.
		s.remove(id)
		return nil, fmt.Errorf("backup: completing %s: %w", id, err)
	}
	return &Backup{Info: info, Tree: copied.entries}, nil
}

// diskReserve is what a backup must leave free on the store's file
// system: a twentieth of it, at most 1 GiB. The store lives on the
// host's /var: a backup that filled it to the last block would stop the
// host's own writes (logs, package updates), and the agent chooses what
// is backed up.
func diskReserve(fs *unix.Statfs_t) int64 {
	return min(int64(fs.Blocks)*fs.Bsize/20, 1<<30)
}

// grewPastManifest: a walk of the source after the measure stopped at
// the manifest's bound, which the measure did not reach: the tree grew.
func grewPastManifest(err error) error {
	if errors.Is(err, errTooBig) {
		return changed(".", "it grew after it was measured: %v", err)
	}
	return err
}

type victim struct {
	id string
	fd int // the backup's exclusive lock
}

// plan chooses the backups to evict, oldest first, so that need fits the
// quota and diskNeed the free space (free, plus what evictions free). It
// locks them exclusively; one that cannot be locked (being restored or
// verified) is passed over. When the source cannot fit even with every
// lockable backup evicted, or would need a backup evicted that allowed
// does not name, it evicts nothing: *NoRoomError (with InTheWay, in the
// second case).
func (s *Store) plan(need, diskNeed, free int64, allowed []string) ([]victim, error) {
	infos, err := s.List()
	if err != nil {
		return nil, err
	}
	var used int64
	for _, in := range infos {
		if in.Problem == "" {
			used += in.Size
		}
	}
	disk := func(free int64) bool { return testSkipDiskCheck || free >= diskNeed }
	noRoom := &NoRoomError{Need: need, Quota: s.quota, Used: used, DiskNeed: diskNeed, DiskFree: free}
	if need > s.quota {
		for _, in := range infos {
			if in.Problem == "" {
				noRoom.Evictable += in.Size
			}
		}
		return nil, noRoom
	}
	var vs []victim
	var way []Info
	u, f := used, free
	for _, in := range infos {
		if u+need <= s.quota && disk(f) {
			break
		}
		if in.Problem != "" {
			continue
		}
		fd, err := s.openBackup(in.ID, true)
		if err != nil {
			continue // in use, or gone
		}
		vs = append(vs, victim{id: in.ID, fd: fd})
		way = append(way, in)
		u -= in.Size
		f += in.Bytes
		noRoom.Evictable += in.Size
	}
	fits := u+need <= s.quota && disk(f)
	if fits && !slices.ContainsFunc(way, func(in Info) bool { return !slices.Contains(allowed, in.ID) }) {
		return vs, nil
	}
	for _, v := range vs {
		unix.Close(v.fd)
	}
	if fits {
		// Room only by evicting: which limit the backups kept leave short.
		noRoom.InTheWay, noRoom.Disk = way, used+need <= s.quota
		return nil, noRoom
	}
	noRoom.Disk = u+need <= s.quota
	return nil, noRoom
}

// writeManifest writes the manifest into the staging directory dfd:
// a temporary file, written and fsynced, renamed, the directory fsynced.
func writeManifest(dfd int, m *manifest) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("backup: manifest: %w", err)
	}
	b = append(b, '\n')
	if len(b) > MaxManifest {
		// The walks stop before this; a manifest this big would not be read.
		return fmt.Errorf("backup: the manifest is %d bytes, more than the %d-byte limit", len(b), MaxManifest)
	}
	fd, err := openAt(dfd, manifestTemp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return storeErr(manifestName, err)
	}
	err = writeAll(fd, b)
	if err == nil {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, manifestTemp, dfd, manifestName)
	}
	if err == nil {
		err = unix.Fsync(dfd)
	}
	if err != nil {
		return storeErr(manifestName, err)
	}
	return nil
}
