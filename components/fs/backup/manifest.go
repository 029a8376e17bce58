package backup

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Version is the manifest format this package writes and reads.
const Version = 1

// Type is what an entry of a tree is.
type Type string

// Entry types. Sockets and devices are recorded (Skipped) but neither
// copied nor restored.
const (
	TypeFile    Type = "file"
	TypeDir     Type = "dir"
	TypeSymlink Type = "symlink"
	TypeFIFO    Type = "fifo"
	TypeSocket  Type = "socket"
	TypeDevice  Type = "device"
)

// Entry is one name of a backed-up tree, as it was in the source.
type Entry struct {
	// Path is "." for the tree's root, otherwise the names from the root
	// joined by "/". Names are kept byte for byte: they may hold
	// newlines or bytes that are not UTF-8 (the manifest then carries the
	// path as path_b64). Path is never resolved as a host path.
	Path   string    `json:"path"`
	Type   Type      `json:"type"`
	Mode   uint32    `json:"mode"` // permission bits with setuid, setgid, sticky (07777)
	MTime  time.Time `json:"mtime"`
	UID    uint32    `json:"uid"`
	GID    uint32    `json:"gid"`
	Size   int64     `json:"size"`   // a regular file's length; 0 otherwise
	SHA256 string    `json:"sha256"` // a regular file's content, hex
	// Target is a symbolic link's target, byte for byte (target_b64 in
	// the manifest when not UTF-8). It is recorded, never followed.
	Target string `json:"target"`
	// Skipped: a socket or a device, recorded but not kept.
	Skipped bool `json:"skipped"`
}

// entryJSON is Entry in the manifest: strings that are not valid UTF-8
// (which encoding/json would replace) travel base64-encoded instead.
type entryJSON struct {
	Path      string    `json:"path,omitempty"`
	PathB64   string    `json:"path_b64,omitempty"`
	Type      Type      `json:"type"`
	Mode      uint32    `json:"mode"`
	MTime     time.Time `json:"mtime"`
	UID       uint32    `json:"uid"`
	GID       uint32    `json:"gid"`
	Size      int64     `json:"size,omitempty"`
	SHA256    string    `json:"sha256,omitempty"`
	Target    string    `json:"target,omitempty"`
	TargetB64 string    `json:"target_b64,omitempty"`
	Skipped   bool      `json:"skipped,omitempty"`
}

func split(s string) (plain, b64 string) {
	if utf8.ValidString(s) {
		return s, ""
	}
	return "", base64.StdEncoding.EncodeToString([]byte(s))
}

func join(plain, b64, what string) (string, error) {
	if b64 == "" {
		return plain, nil
	}
	if plain != "" {
		return "", fmt.Errorf("both %s and %s_b64", what, what)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("%s_b64: %v", what, err)
	}
	return string(b), nil
}

// MarshalJSON writes the manifest form.
func (e Entry) MarshalJSON() ([]byte, error) {
	j := entryJSON{Type: e.Type, Mode: e.Mode, MTime: e.MTime, UID: e.UID, GID: e.GID,
		Size: e.Size, SHA256: e.SHA256, Skipped: e.Skipped}
	j.Path, j.PathB64 = split(e.Path)
	j.Target, j.TargetB64 = split(e.Target)
	return json.Marshal(j)
}

// UnmarshalJSON reads the manifest form.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var j entryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := join(j.Path, j.PathB64, "path")
	if err != nil {
		return err
	}
	t, err := join(j.Target, j.TargetB64, "target")
	if err != nil {
		return err
	}
	*e = Entry{Path: p, Type: j.Type, Mode: j.Mode, MTime: j.MTime, UID: j.UID, GID: j.GID,
		Size: j.Size, SHA256: j.SHA256, Target: t, Skipped: j.Skipped}
	return nil
}

// Source describes what was backed up: the descriptor's name as the
// caller opened it (made valid UTF-8), and its device and inode.
type Source struct {
	Name string `json:"name"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// Info describes one complete backup.
type Info struct {
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Source  Source    `json:"source"`
	Created time.Time `json:"created"`
	Type    Type      `json:"type"` // of the tree's root: dir, file or symlink
	// Entries counts every entry, the root and skipped ones included;
	// Files the regular files; Skipped the sockets and devices.
	Entries int `json:"entry_count"`
	Files   int `json:"files"`
	Skipped int `json:"skipped"`
	// Bytes is the regular files' content; Size what the backup counts
	// against the quota: every entry's charge (see entryCharge).
	Bytes int64 `json:"bytes"`
	Size  int64 `json:"size"`
	// TreeSHA256 is the tree hash (see treeHash): names, types, sizes,
	// contents and link targets of every kept entry.
	TreeSHA256 string `json:"tree_sha256"`
	// Problem, only in List, says why a backup directory's manifest could
	// not be read; such a backup is not counted against the quota and
	// is never evicted (Remove removes it).
	Problem string `json:"problem,omitempty"`
}

// EntryCharge is what each entry counts against the quota besides its
// content and long names: a file system block, which every directory
// and small file takes in the store, and 512 bytes for its inode,
// directory entry and manifest line, the first NameAllowance bytes of
// its path and link target included. (At 512 alone, many small entries
// used eight times what they were charged.)
const EntryCharge = 4096 + 512

// NameAllowance is how many bytes of an entry's path and link target,
// as the manifest encodes them, EntryCharge covers; the rest are charged
// byte for byte.
const NameAllowance = 64

// MaxManifest bounds a manifest, in bytes. A tree whose manifest would be
// larger does not fit the store (*NoRoomError, Manifest set); a manifest
// larger than this is not read.
const MaxManifest = 64 << 20

// maxHeader bounds the manifest without its entries: the label and the
// source's name (MaxLabel bytes each, up to 6 bytes each when escaped),
// the sizes, hashes and keys.
const maxHeader = 16 << 10

// manifest is manifest.json: the Info, then every entry in walk order.
// Entries come last (List reads no further).
type manifest struct {
	Version int `json:"version"`
	Info
	Entries []Entry `json:"entries"`
}

// entryCharge is what e counts against the quota: EntryCharge, the bytes
// its path and link target take in the manifest beyond NameAllowance,
// and its content (a regular file's bytes; a link's target, which the
// stored link holds again).
func entryCharge(e *Entry) int64 {
	n := EntryCharge + max(0, encodedLen(e.Path)+encodedLen(e.Target)-NameAllowance)
	switch e.Type {
	case TypeFile:
		n += e.Size
	case TypeSymlink:
		n += int64(len(e.Target))
	}
	return n
}

// encodedLen is how many bytes s takes in the manifest, quotes left out:
// base64 when it is not valid UTF-8, else as encoding/json escapes it.
func encodedLen(s string) int64 {
	if !utf8.ValidString(s) {
		return int64(base64.StdEncoding.EncodedLen(len(s)))
	}
	n := int64(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"', c == '\\', c == '\b', c == '\f', c == '\n', c == '\r', c == '\t':
			n += 2
		case c < 0x20, c == '<', c == '>', c == '&':
			n += 6 // \u00XX
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			n += 6 // U+2028, U+2029: \u2028, \u2029
			i += 2
		default:
			n++
		}
	}
	return n
}

// lineLen is the length of e's line in the manifest: its JSON and the
// comma after it.
func lineLen(e *Entry) int64 {
	var buf [64]byte
	n := int64(len(`{"type":"","mode":,"mtime":"","uid":,"gid":},`)) + int64(len(e.Type)) +
		digits(int64(e.Mode)) + digits(int64(e.UID)) + digits(int64(e.GID)) +
		int64(len(e.MTime.AppendFormat(buf[:0], time.RFC3339Nano)))
	field := func(s, key string) {
		switch {
		case s == "":
		case utf8.ValidString(s):
			n += int64(len(`"":"",`)+len(key)) + encodedLen(s)
		default:
			n += int64(len(`"_b64":"",`)+len(key)) + encodedLen(s)
		}
	}
	field(e.Path, "path")
	field(e.Target, "target")
	field(e.SHA256, "sha256")
	if e.Size != 0 {
		n += int64(len(`,"size":`)) + digits(e.Size)
	}
	if e.Skipped {
		n += int64(len(`,"skipped":true`))
	}
	return n
}

// digits is the length of v in decimal, its sign included.
func digits(v int64) int64 {
	n := int64(1)
	if v < 0 {
		n++
	}
	for v <= -10 || v >= 10 {
		v /= 10
		n++
	}
	return n
}

// treeHash is the hash of a tree: SHA-256 over, for every entry that is
// kept (not Skipped), in walk order (pre-order, names sorted bytewise),
// its path, type, size, content hash and link target, each
// length-prefixed. Modes, times and owners are not part of it: they are
// metadata, recorded in the manifest (the stored copy keeps them only
// there) and compared between the two walks of the source.
func treeHash(entries []Entry) string {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, e := range entries {
		if e.Skipped {
			continue
		}
		put(e.Path)
		put(string(e.Type))
		binary.BigEndian.PutUint64(n[:], uint64(e.Size))
		h.Write(n[:])
		put(e.SHA256)
		put(e.Target)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// summarise fills the counts, sizes and tree hash of info from entries.
func summarise(info *Info, entries []Entry) {
	info.Entries, info.Files, info.Skipped, info.Bytes, info.Size = len(entries), 0, 0, 0, 0
	for _, e := range entries {
		info.Size += entryCharge(&e)
		switch {
		case e.Skipped:
			info.Skipped++
		case e.Type == TypeFile:
			info.Files++
			info.Bytes += e.Size
		}
	}
	if len(entries) > 0 {
		info.Type = entries[0].Type
	}
	info.TreeSHA256 = treeHash(entries)
}

// cleanLabel makes a caller's label storable: valid UTF-8, no NUL, at
// most MaxLabel bytes.
func cleanLabel(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	if len(s) > MaxLabel {
		s = s[:MaxLabel]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// MaxLabel bounds a backup's label, in bytes.
const MaxLabel = 1024

// parent is the path of rel's directory ("." for a top-level name) and
// rel's last name.
func parent(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

func child(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}
