package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// maskList covers what the agent could reach, as its links resolve now,
// outermost first, and nothing else: not what is absent, outside every
// files list, or beneath the private /tmp with no tree bringing it back.
func TestMaskList(t *testing.T) {
	base := t.TempDir() // beneath /tmp: visible only through a tree
	dir := filepath.Join(base, "etc")
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	key := filepath.Join(dir, "gw.key")
	// A neighbour: dir is not the launcher's alone, so its files are
	// covered one by one.
	for _, f := range []string{key, filepath.Join(logs, "a.log"), filepath.Join(base, "elsewhere"), filepath.Join(dir, "public.txt")} {
		must(t, os.WriteFile(f, nil, 0o600))
	}
	link := filepath.Join(base, "live.key")
	must(t, os.Symlink(key, link))
	ws := filepath.Join(base, "ws")
	must(t, os.Mkdir(ws, 0o755))
	p := &policy.Policy{}
	p.Workspace.Path = policy.Path(ws)
	p.Files.Read = []policy.Path{policy.Path(dir)}
	trees := []TreePlan{{Path: dir}}
	for _, c := range []struct {
		name  string
		own   []string
		trees []TreePlan
		want  []MaskPlan
	}{
		{"a file and a directory, outermost first", []string{key, logs}, trees, []MaskPlan{{Path: logs, Dir: true}, {Path: key}}},
		{"a link is covered where it leads, once", []string{link, key}, trees, []MaskPlan{{Path: key}}},
		{"beneath a covered directory: already gone", []string{filepath.Join(logs, "a.log"), logs}, trees, []MaskPlan{{Path: logs, Dir: true}}},
		{"absent", []string{filepath.Join(dir, "none"), filepath.Join(base, "gone", "x")}, trees, nil},
		{"no files list reaches it", []string{filepath.Join(base, "elsewhere")}, trees, nil},
		{"beneath the private /tmp, no tree", []string{key}, nil, nil},
	} {
		got, err := maskList(p, c.trees, nil, c.own)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// A directory to cover that holds a files list's path or the workspace
// is refused (the agent would start, or a rule be opened, in the empty
// cover), and so are more files than one launch mounts.
func TestMaskListRefuses(t *testing.T) {
	base := t.TempDir()
	own := filepath.Join(base, "own")
	ws := filepath.Join(own, "ws")
	must(t, os.MkdirAll(ws, 0o755))
	p := &policy.Policy{}
	p.Workspace.Path = policy.Path(ws)
	p.Files.Read = []policy.Path{policy.Path(base)}
	trees := []TreePlan{{Path: base}}
	var refused *RefusedError
	if _, err := maskList(p, trees, nil, []string{own}); !errors.As(err, &refused) || !strings.Contains(err.Error(), ws+" lies in the launcher's own directory "+own) {
		t.Errorf("a workspace in the launcher's own directory: %v", err)
	}
	p.Workspace.Path = policy.Path(own)
	if _, err := maskList(p, trees, nil, []string{own}); !errors.As(err, &refused) || !strings.Contains(err.Error(), "the workspace "+own+" is the launcher's own directory") {
		t.Errorf("the workspace is the launcher's own directory: %v", err)
	}
	many := make([]string, MaxMasks+1)
	for i := range many {
		many[i] = filepath.Join(base, "none")
	}
	if _, err := maskList(p, trees, nil, many); !errors.As(err, &refused) || !strings.Contains(err.Error(), "more than the 64 one launch mounts") {
		t.Errorf("%d files: %v", len(many), err)
	}
	if got, err := maskList(p, trees, nil, many[:MaxMasks]); err != nil || got != nil {
		t.Errorf("%d absent files (the most): %v, %v", MaxMasks, got, err)
	}
}

// A file whose directory holds only the launcher's own files (and the
// temporaries privfile.Replace writes beside them) is covered by covering
// the directory, which a rename inside it does not undo; not when the
// directory holds anything else, the workspace, or a path a files list
// names (then the file alone, as before).
func TestMaskListCoversOwnDirectory(t *testing.T) {
	base := t.TempDir()
	gw := filepath.Join(base, "gw")
	must(t, os.Mkdir(gw, 0o700))
	store := filepath.Join(gw, "tokens.json")
	for _, f := range []string{store, store + ".lock", filepath.Join(gw, ".tokens.json-4242")} {
		must(t, os.WriteFile(f, nil, 0o600))
	}
	p := &policy.Policy{}
	p.Workspace.Path = policy.Path(filepath.Join(base, "ws"))
	p.Files.Read = []policy.Path{policy.Path(base)}
	trees := []TreePlan{{Path: base}}
	if got, err := maskList(p, trees, nil, []string{store, store + ".lock"}); err != nil || !reflect.DeepEqual(got, []MaskPlan{{Path: gw, Dir: true}}) {
		t.Errorf("the store's own directory: %+v, %v", got, err)
	}
	if got, err := maskList(p, trees, nil, []string{store}); err != nil || !reflect.DeepEqual(got, []MaskPlan{{Path: store}}) {
		t.Errorf("beside a file not named as the launcher's (the lock): %+v, %v", got, err)
	}
	p.Files.Read = append(p.Files.Read, policy.Path(store+".lock"))
	if got, err := maskList(p, trees, nil, []string{store, store + ".lock"}); err != nil || !reflect.DeepEqual(got, []MaskPlan{{Path: store}, {Path: store + ".lock"}}) {
		t.Errorf("a files list names a path in it: %+v, %v", got, err)
	}
	p.Files.Read = p.Files.Read[:1]
	must(t, os.WriteFile(filepath.Join(gw, ".tokens.json-12x"), nil, 0o600))
	if got, err := maskList(p, trees, nil, []string{store, store + ".lock"}); err != nil || len(got) != 2 || got[0].Dir {
		t.Errorf("beside a file that is no temporary of the store: %+v, %v", got, err)
	}
}
