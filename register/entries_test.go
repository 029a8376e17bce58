package register

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// moduleRoot is where Evidence directories and SECURITY.md are found.
const moduleRoot = ".."

var citePattern = regexp.MustCompile(`S[RD]-\d\d`)

func TestEntriesWellFormed(t *testing.T) {
	es := All()
	if len(es) == 0 {
		t.Fatal("the register is empty")
	}
	seen := map[string]bool{}
	for i, e := range es {
		if err := e.Validate(); err != nil {
			t.Error(err)
		}
		if seen[e.ID] {
			t.Errorf("%s is listed more than once", e.ID)
		}
		seen[e.ID] = true
		if i > 0 && es[i-1].ID >= e.ID {
			t.Errorf("All is not sorted: %s before %s", es[i-1].ID, e.ID)
		}
		if e.Since != "0.1.0" {
			t.Errorf("%s: since %q: there is no release yet, so every entry is 0.1.0", e.ID, e.Since)
		}
		switch {
		case strings.HasPrefix(e.ID, "SD-"):
			if e.Status != DocumentedLimit {
				t.Errorf("%s: status %q, want %q", e.ID, e.Status, DocumentedLimit)
			}
		case e.ID == "SR-09":
			// The evidence rule: an Expectation on how results are read.
		default:
			if e.Kind != Boundary && e.Kind != Setting {
				t.Errorf("%s: kind %q: a risk's control is a Boundary or a Setting", e.ID, e.Kind)
			}
		}
		hasCheck := slices.Contains(CheckIDs(), e.ID)
		if want := "launcher register check --only " + e.ID; hasCheck && e.Check != want || !hasCheck && e.Check != "" {
			t.Errorf("%s: check %q, has a check: %v", e.ID, e.Check, hasCheck)
		}
	}
}

// Ids that entries cite in their own text exist.
func TestEntriesCrossReferences(t *testing.T) {
	for _, e := range All() {
		for _, id := range citePattern.FindAllString(e.Title+" "+e.Threat+" "+e.Control, -1) {
			if _, ok := Lookup(id); !ok {
				t.Errorf("%s cites %s, which is not in the register", e.ID, id)
			}
		}
	}
}

func TestKindAndStatus(t *testing.T) {
	for _, k := range []Kind{Boundary, Setting, Expectation} {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	for _, s := range []Status{Fixed, Open, Accepted, DocumentedLimit} {
		if got, err := ParseStatus(s.String()); err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "boundary", "Boundary ", "Policy"} {
		if _, err := ParseKind(bad); err == nil {
			t.Errorf("ParseKind(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "Fixed", "documented", "documented-limit"} {
		if _, err := ParseStatus(bad); err == nil {
			t.Errorf("ParseStatus(%q) accepted", bad)
		}
	}
	for _, e := range []Entry{
		{ID: "SR-1", Title: "t", Threat: "t", Control: "c", Kind: Boundary, Status: Fixed, Since: "0.1.0"},
		{ID: "SX-01", Title: "t", Threat: "t", Control: "c", Kind: Boundary, Status: Fixed, Since: "0.1.0"},
		{ID: "SR-100", Title: "t", Threat: "t", Control: "c", Kind: Boundary, Status: Fixed, Since: "0.1.0"},
		{ID: "SD-01", Title: "t", Threat: "t", Control: "c", Kind: Expectation, Status: Fixed, Since: "0.1.0"},
		{ID: "SR-01", Title: "t", Threat: "t", Control: "c", Kind: Boundary, Status: DocumentedLimit, Since: "0.1.0"},
		{ID: "SR-01", Title: "t", Threat: "t", Control: "c", Kind: "boundary", Status: Fixed, Since: "0.1.0"},
		{ID: "SR-01", Threat: "t", Control: "c", Kind: Boundary, Status: Fixed, Since: "0.1.0"},
	} {
		if e.Validate() == nil {
			t.Errorf("Validate accepted %+v", e)
		}
	}
}

// All returns a fresh slice: what one caller changes, the next does not see.
func TestAllIsFresh(t *testing.T) {
	a := All()
	a[0].ID, a[0].Evidence = "changed", nil
	b := All()
	if b[0].ID == "changed" || len(b[0].Evidence) == 0 {
		t.Fatalf("All returned shared state: %+v", b[0])
	}
	e, ok := Lookup("SR-01")
	if !ok || e.ID != "SR-01" {
		t.Fatalf("Lookup(SR-01) = %+v, %v", e, ok)
	}
	if _, ok := Lookup("SR-99"); ok {
		t.Fatal("Lookup(SR-99) found an entry")
	}
}

// Every Evidence name is a func TestXxx in that directory's _test.go files.
func TestEvidenceExists(t *testing.T) {
	tests := map[string]map[string]bool{} // dir → test names
	for _, e := range All() {
		for _, ev := range e.Evidence {
			i := strings.LastIndex(ev, ".")
			if i <= 0 || !strings.HasPrefix(ev[i+1:], "Test") {
				t.Errorf("%s: evidence %q is not dir.TestName", e.ID, ev)
				continue
			}
			dir, name := ev[:i], ev[i+1:]
			if _, ok := tests[dir]; !ok {
				tests[dir] = testFuncs(t, filepath.Join(moduleRoot, filepath.FromSlash(dir)))
			}
			if !tests[dir][name] {
				t.Errorf("%s: evidence %q: no func %s in %s/*_test.go", e.ID, ev, name, dir)
			}
		}
		if len(e.Evidence) == 0 {
			t.Logf("%s has no test of its own yet", e.ID)
		}
	}
}

func testFuncs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Errorf("no _test.go files in %s (%v)", dir, err)
		return nil
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("parse %s: %v", f, err)
			continue
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				names[fd.Name.Name] = true
			}
		}
	}
	return names
}

// SECURITY.md cites every entry, and every id it cites exists.
func TestSecurityMDCitesRegister(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot, "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	cited := citePattern.FindAllString(string(b), -1)
	for _, id := range cited {
		if _, ok := Lookup(id); !ok {
			t.Errorf("SECURITY.md cites %s, which is not in the register", id)
		}
	}
	for _, e := range All() {
		if !slices.Contains(cited, e.ID) {
			t.Errorf("SECURITY.md does not cite %s (%s)", e.ID, e.Title)
		}
	}
	// Longer ids (SR-100) would match the pattern in part: refuse them.
	if m := regexp.MustCompile(`S[RD]-\d{3,}`).FindString(string(b)); m != "" {
		t.Errorf("SECURITY.md cites %s: ids have two digits", m)
	}
}
