package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/pinfold/pinfold/internal/jsonkeys"
	"github.com/pinfold/pinfold/internal/privfile"
	"golang.org/x/sys/unix"
)

// ManifestName is the file listing every other file's sha256.
const ManifestName = "manifest.json"

// Manifest is manifest.json: each file of the site (flat: no
// directories) and the sha256 of its bytes.
type Manifest struct {
	Version int               `json:"version"`
	Files   map[string]string `json:"files"`
}

// fileName is a name a site may hold; anything else in a manifest (a
// path, "..") is refused before it is opened.
var fileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,100}$`) })

// sha256Hex is a sha256 as a manifest writes it.
var sha256Hex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// maxFile bounds one file of the site when it is verified, maxManifest
// its manifest.
const (
	maxFile     = 64 << 20
	maxManifest = 1 << 20
)

func manifestOf(files map[string][]byte) ([]byte, error) {
	m := Manifest{Version: 1, Files: map[string]string{}}
	for name, b := range files {
		if !fileName().MatchString(name) || name == ManifestName {
			return nil, fmt.Errorf("site: %q is not a name a site may hold", name)
		}
		sum := sha256.Sum256(b)
		m.Files[name] = hex.EncodeToString(sum[:])
	}
	b, err := json.MarshalIndent(m, "", "  ") // map keys sorted: the same bytes each time
	if len(b) >= maxManifest {
		return nil, fmt.Errorf("site: %s would be larger than the %d bytes that verify reads: %d files are too many", ManifestName, maxManifest, len(files))
	}
	return append(b, '\n'), err
}

// parseManifest reads a manifest strictly: one JSON object with exactly
// the keys "version" (1) and "files" (an object of name to sha256 as 64
// lowercase hex digits), spelled so, no key twice at either level, and
// nothing after it. encoding/json alone would match keys in any case,
// let a repeated key win silently and ignore what follows the object.
func parseManifest(raw []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	m := &Manifest{}
	seen := map[string]bool{}
	err := object(dec, "the manifest", func(key string) error {
		if seen[key] {
			return fmt.Errorf("the key %q is given twice", key)
		}
		seen[key] = true
		switch key {
		case "version":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return malformed(`"version"`, err)
			}
			if string(v) != "1" {
				return fmt.Errorf(`"version" is %.20q, not 1`, v)
			}
			return nil
		case "files":
			m.Files = map[string]string{}
			return object(dec, `"files"`, func(name string) error {
				if _, dup := m.Files[name]; dup {
					return fmt.Errorf("%q is listed twice in \"files\"", name)
				}
				var v any
				if err := dec.Decode(&v); err != nil {
					return malformed(fmt.Sprintf(`"files"[%q]`, name), err)
				}
				sum, ok := v.(string)
				if !ok || !sha256Hex().MatchString(sum) {
					return fmt.Errorf(`"files"[%q] is not a sha256 (64 lowercase hex digits)`, name)
				}
				m.Files[name] = sum
				return nil
			})
		}
		return fmt.Errorf(`unknown key %q: the keys are "version" and "files"`, key)
	})
	if err != nil {
		return nil, err
	}
	if !seen["version"] || !seen["files"] {
		return nil, errors.New(`it needs both "version" and "files"`)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("there is more after its JSON object")
	}
	m.Version = 1
	return m, nil
}

// object reads one JSON object from dec, calling each with every key
// once dec is at its value; each must consume the value.
func object(dec *json.Decoder, what string, each func(key string) error) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("%s is not a JSON object", what)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return malformed(what, err)
		}
		if err := each(t.(string)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return malformed(what, err)
	}
	return nil
}

// malformed says which JSON syntax error stopped the reading of what.
func malformed(what string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s is not well-formed JSON: %v", what, err)
}

// Write writes files and their manifest to dir, whole or not at all: into
// a new directory beside it, renamed into place. An existing dir is
// replaced only when it is empty or a site Write left (builtSite);
// anything else is refused, so that no one's directory is lost to a
// mistyped --out. It returns the manifest's sha256, which whoever
// verifies the site needs from the publisher (see Verify).
func Write(dir string, files map[string][]byte) (manifestSHA256 [sha256.Size]byte, err error) {
	man, err := manifestOf(files)
	if err != nil {
		return manifestSHA256, err
	}
	manifestSHA256 = sha256.Sum256(man)
	return manifestSHA256, write(dir, man, files)
}

func write(dir string, man []byte, files map[string][]byte) error {
	old := false
	if st, err := os.Lstat(dir); err == nil {
		// A link is refused rather than followed: the rename would
		// replace the link, not the site it names.
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%q is a symbolic link: give the directory it names; nothing was replaced", dir)
		}
		if !st.IsDir() {
			return fmt.Errorf("%q exists and is not a directory", dir)
		}
		if err := builtSite(dir); err != nil {
			return fmt.Errorf("%q is not a site this command built: %w; nothing was replaced", dir, err)
		}
		old = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone once renamed; the debris of a failure otherwise
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	all := map[string][]byte{ManifestName: man}
	for name, b := range files {
		all[name] = b
	}
	for name, b := range all {
		if err := writeSynced(filepath.Join(tmp, name), b); err != nil {
			return err
		}
	}
	if !old {
		return os.Rename(tmp, dir)
	}
	// One step swaps the new site in and the old one out to tmp (which
	// the deferred RemoveAll then removes): there is no moment without a
	// site at dir, which two renames left (a hunt's interrupt between
	// them lost --out).
	return unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
}

// builtSite says why the existing directory dir may not be replaced, if
// it may not: it is empty, or it is what Write leaves, checked as Verify
// checks a site against its own manifest (a strict manifest.json, and
// beside it exactly the files it lists, regular, with the bytes it
// names). A directory that merely holds a manifest.json (a browser
// extension's, say), or a site someone has since edited, is someone's
// work.
func builtSite(dir string) error {
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("it cannot be read: %w", bare(err))
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("it cannot be read: %w", bare(err))
	}
	if len(ents) == 0 {
		return nil
	}
	raw, err := readIn(d, ManifestName, maxManifest)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("it is not empty and holds no %s", ManifestName)
	}
	if err != nil {
		return fmt.Errorf("its %s: %w", ManifestName, err)
	}
	if _, err := parseManifest(raw); err != nil {
		return fmt.Errorf("its %s is not a version 1 manifest: %w", ManifestName, err)
	}
	problems, err := Verify(dir, sha256.Sum256(raw))
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("it differs from its %s: %s", ManifestName, problems[0])
	}
	return nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Problem is one way a site differs from its manifest. File is a name
// from the directory or the manifest, so anyone's bytes.
type Problem struct {
	File, What string
}

// String quotes File (Go syntax, every control character escaped), so
// that a name holding escape sequences or a carriage return cannot
// rewrite the lines around it on an auditor's terminal.
func (p Problem) String() string { return strconv.Quote(p.File) + ": " + p.What }

// ErrManifestMismatch is Verify's answer when dir's manifest is not the
// one the caller pinned.
var ErrManifestMismatch = errors.New("its sha256 does not match the one given: nothing was checked against it")

// Verify compares dir with its manifest. The manifest must first hash to
// manifestSHA256, which the caller has from the site's publisher: a
// manifest read from dir alone proves nothing, since whoever can change
// a page there can rewrite its line too. Then every file listed must be
// there with the same bytes, and nothing else may be (no added file, no
// directory, no symbolic link). An error means the check could not be
// made (no readable manifest, or ErrManifestMismatch).
//
// Every file is opened once, relative to dir, by readIn.
func Verify(dir string, manifestSHA256 [sha256.Size]byte) ([]Problem, error) {
	// O_DIRECTORY: dir is the caller's own argument (a link there is
	// theirs to follow), but a FIFO in its place must not block.
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", dir, bare(err))
	}
	defer d.Close()
	path := filepath.Join(dir, ManifestName)
	raw, err := readIn(d, ManifestName, maxManifest)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", path, err)
	}
	if sha256.Sum256(raw) != manifestSHA256 {
		return nil, fmt.Errorf("%q: %w", path, ErrManifestMismatch)
	}
	m, err := parseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: not a version 1 manifest: %w", path, err)
	}
	var problems []Problem
	for name, want := range m.Files {
		if !fileName().MatchString(name) || name == ManifestName {
			problems = append(problems, Problem{name, "the manifest names a file a site cannot hold"})
			continue
		}
		b, err := readIn(d, name, maxFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, Problem{name, "missing"})
			continue
		case err != nil:
			problems = append(problems, Problem{name, err.Error()})
			continue
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != want {
			problems = append(problems, Problem{name, "changed: its sha256 is not the manifest's"})
		}
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("read directory %q: %w", dir, bare(err))
	}
	for _, e := range ents {
		if _, listed := m.Files[e.Name()]; !listed && e.Name() != ManifestName {
			problems = append(problems, Problem{e.Name(), "added: not in the manifest"})
		}
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].File < problems[j].File })
	return problems, nil
}

// readIn reads the regular file name in the directory d, at most max
// bytes. It opens name once, neither following a symbolic link nor
// waiting for a FIFO's writer, and checks what it opened through the
// descriptor, so that no swap between a check and the open can make it
// block on a FIFO or read a file outside d. Errors do not repeat name;
// a missing file is os.ErrNotExist.
func readIn(d *os.File, name string, max int64) ([]byte, error) {
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, errors.New("not a regular file (a symbolic link)")
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, bare(err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, bare(err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return b, nil
}

// bare is err without the path an *fs.PathError adds, for messages that
// name the file themselves (quoted).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadBounded reads at most max bytes of path, a regular file; a larger
// file, or another kind (a FIFO would block the build forever), is an
// error naming it. (Verify reads with readIn, which opens no FIFO and
// follows no link.)
func ReadBounded(path string, max int64) ([]byte, error) {
	f, err := privfile.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, nil
}

// CheckJSONKeys refuses JSON text that encoding/json would read other
// than a careful reader does (jsonkeys.Check): a key twice, a key not in
// lower case, anything after the first value, nesting deeper than
// jsonkeys.MaxDepth. The files the site reads (register evidence, bench
// reports) are written by the launcher and bench/run with lower-case
// keys, once each.
func CheckJSONKeys(b []byte) error { return jsonkeys.Check(b) }
