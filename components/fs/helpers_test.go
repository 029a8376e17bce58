package fs

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// world is a workspace and, beside it, a directory that stands for the
// rest of the host: nothing fs does may change it or show what is in it.
type world struct {
	ws, outside string
	root        *Root
}

const secret = "outside-secret-content"

func newWorld(t *testing.T, protected ...string) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{w.ws, w.outside, filepath.Join(w.outside, "dir")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.put(t, filepath.Join(w.outside, "secret"), secret)
	w.put(t, filepath.Join(w.outside, "dir", "secret"), secret)
	root, err := OpenRoot(w.ws, protected)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	w.root = root
	return w
}

func (w *world) put(t *testing.T, host, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// file writes rel inside the workspace, by host path (the test's own
// set-up, not through fs).
func (w *world) file(t *testing.T, rel, content string) {
	t.Helper()
	w.put(t, filepath.Join(w.ws, rel), content)
}

func (w *world) symlink(t *testing.T, target, rel string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(w.ws, rel)); err != nil {
		t.Fatal(err)
	}
}

// snapshot lists every path under dir with its content (or "dir"/"link").
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link:" + l
		case fi.IsDir():
			out[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func (w *world) outsideUnchanged(t *testing.T) {
	t.Helper()
	got := snapshot(t, w.outside)
	want := map[string]string{".": "dir", "secret": secret, "dir": "dir", "dir/secret": secret}
	if len(got) != len(want) {
		t.Errorf("outside changed: %v", got)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("outside changed at %s: %q", k, got[k])
		}
	}
}

// wantKind checks that err is an *Error of kind k whose message never
// carries the secret.
func wantKind(t *testing.T, what string, err error, k Kind) {
	t.Helper()
	if got := KindOf(err); got != k {
		t.Errorf("%s: %v (kind %v), want kind %v", what, err, got, k)
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("%s: the error carries file contents: %v", what, err)
	}
}

func wantOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s (control): %v", what, err)
	}
}

// tempFiles lists write's temporary files anywhere in the workspace.
func tempFiles(t *testing.T, ws string) []string {
	t.Helper()
	var out []string
	filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), TempPrefix) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (mounts)")
	}
}
