package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks the decoder's promises on any input: it never panics; a
// policy it accepts re-validates cleanly, holds only absolute clean paths and
// decodes the same way twice; a policy it refuses is refused with an *Error
// whose every problem names its check and says what is wrong.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.toml", "testdata/invalid/*.toml", "testdata/live/*.toml"} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			f.Fatalf("no seeds in %s (%v)", pattern, err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.toml", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, not *Error: %v", err, err)
			}
			if len(pe.Problems) == 0 {
				t.Fatal("*Error with no problems")
			}
			lines := strings.Count(string(data), "\n") + 1
			for _, pr := range pe.Problems {
				if pr.Check == "" || pr.Msg == "" {
					t.Errorf("problem without a check or message: %#v", pr)
				}
				if strings.Contains(pr.Msg, errBug.Error()) {
					t.Errorf("problem reports a bug: %s", pr)
				}
				if pr.Line < 0 || pr.Line > lines {
					t.Errorf("problem on line %d of a %d-line file: %s", pr.Line, lines, pr)
				}
			}
			_ = pe.Error()
			return
		}
		if ps := Validate(p); len(ps) > 0 {
			t.Errorf("accepted policy fails Validate: %v", ps)
		}
		for _, path := range policyPaths(p) {
			if !filepath.IsAbs(string(path)) || filepath.Clean(string(path)) != string(path) {
				t.Errorf("accepted path %q is not absolute and clean", path)
			}
		}
		again, err := Parse("fuzz.toml", data)
		if err != nil {
			t.Fatalf("second Parse of the same bytes failed: %v", err)
		}
		a, b := *p, *again
		a.src, b.src = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("second Parse differs:\n%+v\n%+v", a, b)
		}
	})
}

func policyPaths(p *Policy) []Path {
	paths := []Path{p.Workspace.Path}
	for _, l := range [][]Path{p.Files.Read, p.Files.Write, p.Files.Exec, p.Files.Protected} {
		paths = append(paths, l...)
	}
	return paths
}
