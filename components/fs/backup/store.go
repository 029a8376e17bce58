package backup

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultQuota is the store's size when Open is given 0 (DESIGN.md §5).
const DefaultQuota = 3 << 30

// Names in the store directory.
const (
	markerName   = ".pinfold-backups" // says the directory is a store
	lockName     = ".lock"            // flock'd: staging, eviction, removal
	stagePrefix  = ".stage-"          // a backup being staged (incomplete)
	deletePrefix = ".del-"            // a backup being removed
	manifestName = "manifest.json"    // in a backup: written, fsynced, last
	manifestTemp = "manifest.json.tmp"
	dataName     = "data" // in a backup: the copy of the tree's root
	markerText   = "pinfold recursive-delete backup store, format 1\n"
)

// Errors. Each is wrapped with details; test with errors.Is.
var (
	// ErrNoRoom: the source does not fit beside the backups kept (and
	// the evictions allowed); *NoRoomError has the sizes, and names the
	// older backups whose eviction would make room.
	ErrNoRoom = errors.New("backup: no room in the backup store")
	// ErrChanged: the source changed while it was staged (the staging
	// was removed), or the tree could not be read as it was seen.
	ErrChanged = errors.New("backup: the source changed during staging")
	// ErrCorrupt: a stored copy does not match its manifest.
	ErrCorrupt = errors.New("backup: the stored copy does not match its manifest")
	// ErrNotFound: no complete backup has that id.
	ErrNotFound = errors.New("backup: no such backup")
	// ErrBadID: the string is not a backup id.
	ErrBadID = errors.New("backup: not a backup id")
	// ErrBadName: a restore name that is not a single file name.
	ErrBadName = errors.New("backup: not a single file name")
	// ErrExists: the restore's name is taken; nothing was changed.
	ErrExists = errors.New("backup: the restore target already exists")
	// ErrInUse: the backup is being restored or verified.
	ErrInUse = errors.New("backup: the backup is in use")
)

// NoRoomError is ErrNoRoom with its sizes. Which limit failed: the
// manifest's when Manifest is set (the source's manifest would pass
// MaxManifest; the measure stopped there, so Need and Manifest are what
// it had counted, and the other sizes are not filled in); else the file
// system's free space when Disk is true; else the quota (Need > Quota -
// what stays). Nothing was evicted. InTheWay, when set, are the oldest
// backups whose eviction would make room: asked again with their ids
// allowed (StageEvicting), the source fits.
type NoRoomError struct {
	Need      int64 // the source's size, as counted against the quota
	Quota     int64
	Used      int64 // complete backups' sizes
	Evictable int64 // of Used, what eviction could free (backups not in use)
	Disk      bool
	DiskNeed  int64 // the source's estimated use of the store's file system
	DiskFree  int64 // available there, before evicting
	Manifest  int64 // more than MaxManifest: the manifest's size when the measure stopped
	InTheWay  []Info
	// Inodes, when set, is the source's entry count, which the store's
	// file system's free inodes (InodesFree) cannot take beside its
	// reserve (the disk is the limit: Disk is true).
	Inodes, InodesFree int64
}

func (e *NoRoomError) Error() string {
	if e.Manifest > 0 {
		return fmt.Sprintf("backup: no room in the backup store: the source has too many entries or too long names: its manifest would take more than %d bytes, the limit",
			MaxManifest)
	}
	if e.Inodes > 0 {
		return fmt.Sprintf("backup: no room in the backup store: the copy needs %d inodes on its file system, which has %d free, and a twentieth of them kept free",
			e.Inodes, e.InodesFree)
	}
	way := ""
	if n := len(e.InTheWay); n > 0 {
		way = fmt.Sprintf("; evicting the %d oldest backups would make room", n)
	}
	if e.Disk {
		return fmt.Sprintf("backup: no room in the backup store: the copy needs about %d bytes on its file system (a twentieth of which, at most 1 GiB, is kept free besides), which has %d free, %d more if every evictable backup were evicted%s",
			e.DiskNeed, e.DiskFree, e.Evictable, way)
	}
	return fmt.Sprintf("backup: no room in the backup store: the source needs %d bytes of the %d-byte quota; %d are used by backups, of which %d could be evicted%s",
		e.Need, e.Quota, e.Used, e.Evictable, way)
}

// Is makes errors.Is(err, ErrNoRoom) true.
func (e *NoRoomError) Is(target error) bool { return target == ErrNoRoom }

// Store is a backup store: a directory of backups, one subdirectory
// each, named by its id. All access is through a descriptor of the
// directory taken at Open.
type Store struct {
	dir   string
	fd    int
	quota int64
	euid  int
}

// Backup is what Stage made: a complete, verified backup.
type Backup struct {
	Info
	Tree []Entry // every entry, in walk order, as the manifest has them
}

// Open opens the store at dir, making it (mode 0700, parents too) when
// missing. The directory must be the caller's own, not writable by group
// or others, and not a symbolic link; an existing directory must be a
// store already (it holds the marker file) or empty. Leftovers of
// crashes (incomplete stagings, half-removed backups) are removed, unless
// another process is staging at that moment. quota 0 is DefaultQuota.
func Open(dir string, quota int64) (*Store, error) {
	switch {
	case quota == 0:
		quota = DefaultQuota
	case quota < 0:
		return nil, fmt.Errorf("backup: negative quota %d", quota)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("backup: store %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return nil, fmt.Errorf("backup: store %s is a symbolic link or not a directory: %w", dir, err)
		}
		return nil, fmt.Errorf("backup: store %s: %w", dir, err)
	}
	s := &Store{dir: dir, fd: fd, quota: quota, euid: os.Geteuid()}
	if err := s.check(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if unlock, err := s.lockStore(true); err == nil {
		s.cleanup()
		unlock()
	}
	return s, nil
}

func (s *Store) check() error {
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		return fmt.Errorf("backup: store %s: %w", s.dir, err)
	}
	if int(st.Uid) != s.euid {
		return fmt.Errorf("backup: store %s belongs to uid %d, not to this process (uid %d)", s.dir, st.Uid, s.euid)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("backup: store %s has mode %#o: group or others can write it", s.dir, st.Mode&0o7777)
	}
	var m unix.Stat_t
	switch err := unix.Fstatat(s.fd, markerName, &m, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		if m.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("backup: store %s: %s is not a regular file", s.dir, markerName)
		}
	case err == unix.ENOENT:
		names, err := readNames(s.fd)
		if err != nil {
			return fmt.Errorf("backup: store %s: %w", s.dir, err)
		}
		if len(names) > 0 {
			return fmt.Errorf("backup: %s is not a backup store (no %s) and not empty: refusing to use it", s.dir, markerName)
		}
		if st.Mode&0o777 != 0o700 {
			if err := unix.Fchmod(s.fd, 0o700); err != nil {
				return fmt.Errorf("backup: store %s: %w", s.dir, err)
			}
		}
		fd, err := openAt(s.fd, markerName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("backup: store %s: %w", s.dir, err)
		}
		err = writeAll(fd, []byte(markerText))
		if err == nil {
			err = unix.Fsync(fd)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("backup: store %s: %w", s.dir, err)
		}
		unix.Fsync(s.fd)
	default:
		return fmt.Errorf("backup: store %s: %w", s.dir, err)
	}
	return nil
}

// Close closes the store's directory descriptor.
func (s *Store) Close() error { return unix.Close(s.fd) }

// Dir is the store's directory, as given to Open.
func (s *Store) Dir() string { return s.dir }

// Quota is the store's quota in bytes.
func (s *Store) Quota() int64 { return s.quota }

// lockStore takes the store's exclusive lock (staging, eviction, removal,
// clean-up). nonblock: fail at once when another holds it.
func (s *Store) lockStore(nonblock bool) (func(), error) {
	fd, err := openAt(s.fd, lockName, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: store lock: %w", err)
	}
	how := unix.LOCK_EX
	if nonblock {
		how |= unix.LOCK_NB
	}
	if err := flock(fd, how); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("backup: store lock: %w", err)
	}
	return func() { unix.Close(fd) }, nil
}

// cleanup removes the leftovers of crashes: stagings and removals that
// did not finish, and id directories without a manifest. The caller holds
// the store lock, so no staging or removal is running.
func (s *Store) cleanup() {
	names, err := readNames(s.fd)
	if err != nil {
		return
	}
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, stagePrefix) && validID(n[len(stagePrefix):]),
			strings.HasPrefix(n, deletePrefix) && validID(n[len(deletePrefix):]):
			removeAll(s.fd, n)
		case validID(n):
			fd, err := openDir(s.fd, n)
			if err != nil {
				continue
			}
			var st unix.Stat_t
			err = unix.Fstatat(fd, manifestName, &st, unix.AT_SYMLINK_NOFOLLOW)
			unix.Close(fd)
			if err == unix.ENOENT {
				removeAll(s.fd, n)
			}
		}
	}
	unix.Fsync(s.fd)
}

// ids: the creation time in UTC to the nanosecond, fixed width (so they
// sort by time), and 32 random bits.
const idLayout = "20060102T150405.000000000Z"

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{8}$`) })

func newID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format(idLayout) + "-" + hex.EncodeToString(b[:])
}

func validID(id string) bool { return idPattern().MatchString(id) }

// ValidID reports whether id is a well-formed backup id (it may not
// exist).
func ValidID(id string) bool { return validID(id) }

func checkID(id string) error {
	if !validID(id) {
		return fmt.Errorf("%w: %q", ErrBadID, id)
	}
	return nil
}

// openBackup opens the complete backup id and locks it: shared for
// reading it, exclusive (never waiting) for removing it. The descriptor
// is the lock; closing it releases it.
func (s *Store) openBackup(id string, exclusive bool) (int, error) {
	if err := checkID(id); err != nil {
		return -1, err
	}
	fd, err := openDir(s.fd, id)
	if err == unix.ENOENT {
		return -1, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return -1, fmt.Errorf("backup: %s: %w", id, err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX | unix.LOCK_NB
	}
	if err := flock(fd, how); err != nil {
		unix.Close(fd)
		if err == unix.EWOULDBLOCK {
			return -1, fmt.Errorf("%w: %s is being restored or verified", ErrInUse, id)
		}
		return -1, fmt.Errorf("backup: %s: %w", id, err)
	}
	// Still there under that name? A removal may have renamed it between
	// the open and the lock.
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Fstatat(s.fd, id, &b, unix.AT_SYMLINK_NOFOLLOW) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		unix.Close(fd)
		return -1, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return fd, nil
}

// openManifest opens the manifest in the backup directory bfd: a regular
// file of at most MaxManifest bytes. Reads go through the returned reader,
// which stops one byte past MaxManifest (the file may grow).
func openManifest(bfd int, id string) (*os.File, io.Reader, error) {
	fd, err := openAt(bfd, manifestName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err == unix.ENOENT {
		return nil, nil, fmt.Errorf("%w: %s (incomplete: no manifest)", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("backup: %s: manifest: %w", id, err)
	}
	f := os.NewFile(uintptr(fd), manifestName)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("backup: %s: manifest: %w", id, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: the manifest is not a regular file", ErrCorrupt, id)
	}
	if st.Size > MaxManifest {
		f.Close()
		return nil, nil, tooBigManifest(id, st.Size)
	}
	return f, io.LimitReader(f, MaxManifest+1), nil
}

func tooBigManifest(id string, size int64) error {
	return fmt.Errorf("backup: %s: the manifest is %d bytes, more than the %d-byte limit: not read", id, size, MaxManifest)
}

// readManifest reads and checks the manifest in the backup directory bfd.
func readManifest(bfd int, id string) (*manifest, error) {
	f, r, err := openManifest(bfd, id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("backup: %s: manifest: %w", id, err)
	}
	if len(b) > MaxManifest {
		return nil, tooBigManifest(id, int64(len(b)))
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: the manifest is not valid: %v", ErrCorrupt, id, err)
	}
	if err := checkHeader(&m, id); err != nil {
		return nil, err
	}
	if len(m.Entries) == 0 || m.Entries[0].Path != "." {
		return nil, fmt.Errorf("%w: %s: the manifest has no root entry", ErrCorrupt, id)
	}
	return &m, nil
}

func checkHeader(m *manifest, id string) error {
	if m.Version != Version {
		return fmt.Errorf("backup: %s: manifest version %d, this build reads %d", id, m.Version, Version)
	}
	if m.ID != id {
		return fmt.Errorf("%w: %s: the manifest names backup %q", ErrCorrupt, id, m.ID)
	}
	return nil
}

// readSummary reads the manifest in the backup directory bfd up to its
// root entry (writeManifest puts the entries last): its Info, checked as
// readManifest checks it, without reading or holding the other entries.
func readSummary(bfd int, id string) (*Info, error) {
	f, r, err := openManifest(bfd, id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bad := func(err error) error {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: %s: the manifest is not valid: %v", ErrCorrupt, id, err)
	}
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil {
		return nil, bad(err)
	} else if tok != json.Delim('{') {
		return nil, bad(fmt.Errorf("not an object"))
	}
	fields := map[string]json.RawMessage{}
	var root *Entry
	for root == nil && dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		key, _ := tok.(string)
		if strings.EqualFold(key, "entries") { // as json.Unmarshal matches it
			if tok, err := dec.Token(); err != nil {
				return nil, bad(err)
			} else if tok != json.Delim('[') || !dec.More() {
				break
			}
			root = new(Entry)
			if err := dec.Decode(root); err != nil {
				return nil, bad(err)
			}
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad(err)
		}
		fields[key] = v
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, bad(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, bad(err)
	}
	if err := checkHeader(&m, id); err != nil {
		return nil, err
	}
	if root == nil || root.Path != "." {
		return nil, fmt.Errorf("%w: %s: the manifest has no root entry", ErrCorrupt, id)
	}
	return &m.Info, nil
}

// List describes the complete backups, oldest first, from their
// manifests' summaries (read up to the root entry, not the other
// entries: Show and Verify read those). A backup whose manifest cannot be
// read (over MaxManifest among the reasons) is listed with its Problem.
func (s *Store) List() ([]Info, error) {
	names, err := readNames(s.fd)
	if err != nil {
		return nil, fmt.Errorf("backup: store %s: %w", s.dir, err)
	}
	var out []Info
	for _, n := range names { // sorted, so by time
		if !validID(n) {
			continue
		}
		fd, err := openDir(s.fd, n)
		if err != nil {
			continue // removed meanwhile, or not a directory
		}
		info, err := readSummary(fd, n)
		unix.Close(fd)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // incomplete
		case err != nil:
			out = append(out, Info{ID: n, Problem: err.Error()})
		default:
			out = append(out, *info)
		}
	}
	return out, nil
}

// Show describes backup id and every entry it holds, in walk order.
func (s *Store) Show(id string) (Info, []Entry, error) {
	fd, err := s.openBackup(id, false)
	if err != nil {
		return Info{}, nil, err
	}
	defer unix.Close(fd)
	m, err := readManifest(fd, id)
	if err != nil {
		return Info{}, nil, err
	}
	return m.Info, m.Entries, nil
}

// Remove deletes backup id. It waits for a staging to finish and fails
// with ErrInUse while the backup is being restored or verified.
func (s *Store) Remove(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	unlock, err := s.lockStore(false)
	if err != nil {
		return err
	}
	defer unlock()
	return s.remove(id)
}

// remove removes backup id; the caller holds the store lock.
func (s *Store) remove(id string) error {
	fd, err := s.openBackup(id, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return s.removeLocked(id)
}

// removeLocked removes backup id, which the caller has locked: renamed
// out of the ids first, so it is never seen half removed.
func (s *Store) removeLocked(id string) error {
	gone := deletePrefix + id
	if err := unix.Renameat2(s.fd, id, s.fd, gone, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("backup: removing %s: %w", id, err)
	}
	unix.Fsync(s.fd)
	if err := removeAll(s.fd, gone); err != nil {
		return fmt.Errorf("backup: removing %s: %w", id, err)
	}
	unix.Fsync(s.fd)
	return nil
}
