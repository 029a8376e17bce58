package report

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func sample() *Report {
	r := NewReport("launch", "Launch of /usr/bin/true.", "ms", Lower)
	r.Add("bare", 0.9, 1.2, 40)
	r.Add("launcher", 17.3, 19.1, 40)
	r.Add("throughput", 2000, 0, 1)
	r.Notes = []string{"launcher / bubblewrap: 2.11"}
	return r
}

func TestNewReport(t *testing.T) {
	before := time.Now().Add(-time.Second)
	r := NewReport("proxy", "t", "MB/s", Higher)
	d, err := time.Parse(time.RFC3339, r.Date)
	if err != nil {
		t.Fatalf("date %q: %v", r.Date, err)
	}
	if d.Before(before) || d.After(time.Now().Add(time.Second)) {
		t.Errorf("date %v is not now", d)
	}
	if !strings.HasSuffix(r.Date, "Z") {
		t.Errorf("date %q is not UTC", r.Date)
	}
	if r.Machine.CPUs != runtime.NumCPU() || r.Machine.GoVersion != runtime.Version() {
		t.Errorf("machine %+v", r.Machine)
	}
	if runtime.GOOS == "linux" && r.Machine.Kernel == "" {
		t.Error("kernel release is empty")
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "launch.json")
	want := sample()
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n  \"bench\": \"launch\",\n") {
		t.Errorf("not indented JSON:\n%s", data)
	}
	if strings.Count(string(data), `"p90"`) != 2 {
		t.Errorf("p90 of 0 is not left out:\n%s", data)
	}
	// Writing again replaces the file.
	want.Rows = want.Rows[:1]
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if got, err = Read(path); err != nil || len(got.Rows) != 1 {
		t.Errorf("after rewrite: %v rows, %v", len(got.Rows), err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := sample().WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	// An invalid report is refused before anything is written, and the
	// old file stays.
	bad := sample()
	bad.Better = "faster"
	if err := bad.WriteFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("invalid report written, or error without the file: %v", err)
	}
	if _, err := Read(path); err != nil {
		t.Errorf("old file damaged: %v", err)
	}
	// A write that fails after the temporary file exists (the target is
	// a directory, so the rename fails) removes it.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sample().WriteFile(filepath.Join(dir, "sub")); err == nil {
		t.Error("rename over a directory succeeded")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"r.json", "sub"}) {
		t.Errorf("directory holds %q, want only r.json and sub", names)
	}
	// A file in the current directory (no directory in the path).
	t.Chdir(dir)
	if err := sample().WriteFile("here.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := Read("here.json"); err != nil {
		t.Error(err)
	}
}

func TestReadErrors(t *testing.T) {
	const rows = `[{"name":"bare","median":1,"p90":2,"runs":3},{"name":"launcher","median":17,"runs":3}]`
	const good = `{"bench":"launch","title":"t","unit":"ms","better":"lower","date":"2026-11-30T10:00:00Z",
		"machine":{"kernel":"6.1","cpus":2,"go":"go1.26"},
		"rows":` + rows + `,
		"notes":["x"]}`
	// Each case replaces one piece of good.
	tests := []struct {
		name, old, new, want string
	}{
		{"valid", "", "", ""},
		{"valid with an offset", "10:00:00Z", "10:00:00+02:00", ""},
		{"minimal", `"title":"t",`, ``, ""},
		{"unknown field", `"title":"t"`, `"title":"t","extra":1`, `unknown field "extra"`},
		{"unknown row field", `"runs":3}]`, `"runs":3,"p50":1}]`, `unknown field "p50"`},
		{"unknown machine field", `"go":"go1.26"`, `"go":"go1.26","arch":"x"`, `unknown field "arch"`},
		{"not JSON", good, `bench: launch`, "not a benchmark report"},
		{"not an object", good, `[1,2]`, "not a benchmark report"},
		{"empty file", good, ``, "not a benchmark report"},
		{"truncated", good, good[:40], "not a benchmark report"},
		{"wrong type", `"cpus":2`, `"cpus":"two"`, "not a benchmark report"},
		{"data after", good, good + `{}`, "data after the report"},
		{"bench missing", `"bench":"launch",`, ``, "bench is missing"},
		{"bench empty", `"bench":"launch"`, `"bench":""`, "bench is missing"},
		{"bench not a name", `"bench":"launch"`, `"bench":"Launch Times"`, "not a name"},
		{"bench name at the bound", `"bench":"launch"`, `"bench":"` + strings.Repeat("a", MaxName) + `"`, ""},
		{"bench name too long", `"bench":"launch"`, `"bench":"` + strings.Repeat("a", MaxName+1) + `"`, "at most 64"},
		{"unit missing", `"unit":"ms",`, ``, "unit is missing"},
		{"unit blank", `"unit":"ms"`, `"unit":"  "`, "unit is missing"},
		{"better missing", `"better":"lower",`, ``, "better is missing"},
		{"better invalid", `"better":"lower"`, `"better":"faster"`, `better is "faster"`},
		{"date missing", `"date":"2026-11-30T10:00:00Z",`, ``, "date is missing"},
		{"date invalid", `2026-11-30T10:00:00Z`, `30 Nov 2026`, "not RFC 3339"},
		{"rows missing", `"rows":` + rows + `,`, ``, "rows are missing"},
		{"rows null", rows, `null`, "rows are missing"},
		{"rows empty", rows, `[]`, "rows are missing"},
		{"row name missing", `"name":"launcher",`, ``, "rows[1]: name is missing"},
		{"row name blank", `"name":"launcher"`, `"name":" "`, "rows[1]: name is missing"},
		{"row name repeated", `"name":"launcher"`, `"name":"bare"`, `rows[1]: name "bare" appears twice`},
		{"median negative", `"median":17`, `"median":-1`, "median -1 is not a finite number >= 0"},
		{"p90 negative", `"p90":2`, `"p90":-0.5`, "p90 -0.5 is not a finite number >= 0"},
		{"median negative zero", `"median":17`, `"median":-0`, "median -0 is not a finite number >= 0"},
		{"key twice", `"title":"t"`, `"title":"t","title":"u"`, `key "title" appears twice`},
		{"row key twice", `"median":17`, `"median":17,"median":1`, `key "median" appears twice`},
		{"key in upper case", `"unit":"ms"`, `"UNIT":"ms"`, `key "UNIT" is not in lower case`},
		{"median out of range", `"median":17`, `"median":1e999`, "not a benchmark report"},
		{"runs zero", `"runs":3}]`, `"runs":0}]`, "runs is 0"},
		{"runs missing", `,"runs":3}]`, `}]`, "runs is 0"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := good
			if tc.old != "" || tc.new != "" {
				if !strings.Contains(good, tc.old) {
					t.Fatalf("%q not in the good report", tc.old)
				}
				text = strings.Replace(good, tc.old, tc.new, 1)
			}
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Read(path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(r.Rows) != 2 || r.Rows[1].P90 != 0 {
					t.Errorf("rows %+v", r.Rows)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q, want one naming %s and containing %q", err, path, tc.want)
			}
		})
	}
}

func TestReadSizeAndMissing(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	// Valid JSON (whitespace after an object) but over the cap.
	data := append([]byte(`{"bench":"x"}`), make([]byte, MaxSize)...)
	for i := 13; i < len(data); i++ {
		data[i] = ' '
	}
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
	missing := filepath.Join(dir, "none.json")
	if _, err := Read(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWithSuffix(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"bin/bench/proxy.json", "bin/bench/proxy-rate.json"},
		{"proxy.json", "proxy-rate.json"},
		{"out/proxy", "out/proxy-rate"},
		{"a.json.d/x.txt", "a.json.d/x.txt-rate"},
	} {
		if got := WithSuffix(tc.path, "-rate"); got != tc.want {
			t.Errorf("WithSuffix(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// WriteFile refuses what Read would refuse, including values JSON cannot
// carry.
func TestWriteFileValidates(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Report)
		want   string
	}{
		{"NaN median", func(r *Report) { r.Rows[0].Median = math.NaN() }, "median NaN is not a finite number"},
		{"infinite median", func(r *Report) { r.Rows[1].Median = math.Inf(1) }, "median +Inf is not a finite number"},
		{"infinite p90", func(r *Report) { r.Rows[0].P90 = math.Inf(1) }, "p90 +Inf is not a finite number"},
		{"negative p90", func(r *Report) { r.Rows[0].P90 = -1 }, "p90 -1 is not"},
		{"no rows", func(r *Report) { r.Rows = nil }, "rows are missing"},
		{"bad date", func(r *Report) { r.Date = "yesterday" }, "not RFC 3339"},
		{"bad bench", func(r *Report) { r.Bench = "proxy rate" }, "not a name"},
		{"runs negative", func(r *Report) { r.Rows[2].Runs = -1 }, "runs is -1"},
		{"too large", func(r *Report) {
			for i := range 20000 {
				r.Add(strings.Repeat("x", 40)+time.Duration(i).String(), 1, 1, 1)
			}
		}, "more than"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := sample()
			tc.change(r)
			path := filepath.Join(dir, "r.json")
			err := r.WriteFile(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s and containing %q", err, path, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left %d files behind", len(ents))
			}
		})
	}
}
