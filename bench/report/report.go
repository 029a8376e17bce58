// Package report is the file format of the benchmarks' machine-readable
// output: one Report per JSON file, written by the programs under bench/
// (their -json flag) and read by whatever draws charts from them.
//
// A Report is one series of comparable figures: every Row has the same
// Unit, and Better says which way is good. A program that measures things
// in different units writes one Report for each.
//
// Read is strict, so that a file the site accepts is one a program could
// have written: unknown fields, a key given twice or not in lower case,
// missing or invalid required fields (a figure that is not a finite
// number >= 0, or is -0) and files over MaxSize are refused, with an
// error naming the file.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pinfold/pinfold/internal/jsonkeys"
	"github.com/pinfold/pinfold/internal/privfile"
	"golang.org/x/sys/unix"
)

// MaxSize is the largest file Read accepts, in bytes.
const MaxSize = 1 << 20

// Which way is better, the values of Report.Better.
const (
	Lower  = "lower"
	Higher = "higher"
)

// Report is one benchmark's results: a series of rows in one unit.
type Report struct {
	// Bench names the program that measured: "launch", "roundtrip",
	// "proxy", "codemode". A program writing several reports uses its
	// name in each; the files' names tell them apart.
	Bench string `json:"bench"`
	// Title says in one sentence what was measured.
	Title string `json:"title"`
	// Unit is the unit of every row's Median and P90 ("ms", "µs",
	// "MB/s", "scripts/s", ...).
	Unit string `json:"unit"`
	// Better is "lower" or "higher": which way a row is better.
	Better string `json:"better"`
	// Date is when the run ended, in RFC 3339, UTC.
	Date string `json:"date"`
	// Machine is what the run ran on.
	Machine Machine `json:"machine"`
	// Rows are the figures, in the order the program prints them.
	Rows []Row `json:"rows"`
	// Notes are the ratios and caveats the program prints beside its
	// table, as it prints them.
	Notes []string `json:"notes,omitempty"`
}

// Machine describes the machine a run ran on.
type Machine struct {
	// Kernel is the kernel's release (uname -r).
	Kernel string `json:"kernel"`
	// CPUs is the number of logical CPUs the process could use.
	CPUs int `json:"cpus"`
	// GoVersion is the Go toolchain that built the program.
	GoVersion string `json:"go"`
}

// Row is one thing measured: the median of its runs and, where the
// program has it, the 90th percentile, both in the Report's Unit.
type Row struct {
	// Name is the row's label as the program prints it, unique in its
	// Report.
	Name string `json:"name"`
	// Median is the median of the runs.
	Median float64 `json:"median"`
	// P90 is the 90th percentile, or 0 (left out) when the program
	// does not compute one.
	P90 float64 `json:"p90,omitempty"`
	// Runs is how many measurements Median summarizes (1 for a single
	// sustained run).
	Runs int `json:"runs"`
}

// NewReport starts a Report dated now, in UTC, and describing this
// machine.
func NewReport(bench, title, unit, better string) *Report {
	return &Report{
		Bench:  bench,
		Title:  title,
		Unit:   unit,
		Better: better,
		Date:   time.Now().UTC().Format(time.RFC3339),
		Machine: Machine{
			Kernel:    kernelRelease(),
			CPUs:      runtime.NumCPU(),
			GoVersion: runtime.Version(),
		},
	}
}

// kernelRelease is uname's release, or /proc's copy of it, or "" when
// neither answers.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		if s := unix.ByteSliceToString(u.Release[:]); s != "" {
			return s
		}
	}
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Add appends a row; p90 is 0 when the program has none.
func (r *Report) Add(name string, median, p90 float64, runs int) {
	r.Rows = append(r.Rows, Row{Name: name, Median: median, P90: p90, Runs: runs})
}

// WriteFile checks r as Read would and writes it to path as indented
// JSON, mode 0644, atomically: to a temporary file in the same directory,
// then renamed over path, so a reader sees the old file or the whole new
// one.
func (r *Report) WriteFile(path string) (err error) {
	if err := r.validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	data = append(data, '\n')
	if err := privfile.Replaceable(path); err != nil {
		return err
	}
	if len(data) > MaxSize {
		return fmt.Errorf("%s: %d bytes, more than the %d a reader accepts", path, len(data), MaxSize)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WithSuffix names the file for a program's further report next to its
// main one at path: suffix goes before a final ".json" ("proxy.json",
// "-rate" → "proxy-rate.json"), or at the end when there is none.
func WithSuffix(path, suffix string) string {
	if base, ok := strings.CutSuffix(path, ".json"); ok {
		return base + suffix + ".json"
	}
	return path + suffix
}

// Read reads and checks the Report in path. It refuses files over
// MaxSize, anything but one JSON object, unknown fields, and reports
// whose required fields (Bench, Unit, Better, Date, Rows) are missing or
// invalid; every error names the file.
func Read(path string) (*Report, error) {
	f, err := privfile.OpenRegular(path) // a FIFO would block forever
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a benchmark report: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: data after the report", path)
	}
	// The decoder keeps the last of a key given twice and matches keys in
	// any case; a reader that keeps the first (or a person) would see
	// other figures than the site draws.
	if err := jsonkeys.Check(data); err != nil {
		return nil, fmt.Errorf("%s: not a benchmark report as a program writes it: %v", path, err)
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// validate checks what Read requires of a Report.
func (r *Report) validate() error {
	switch {
	case r.Bench == "":
		return errors.New("bench is missing")
	case !isName(r.Bench):
		return fmt.Errorf("bench %q is not a name (lower-case letters, digits and '-', at most %d)", r.Bench, MaxName)
	case strings.TrimSpace(r.Unit) == "":
		return errors.New("unit is missing")
	case r.Better == "":
		return errors.New("better is missing")
	case r.Better != Lower && r.Better != Higher:
		return fmt.Errorf("better is %q, want %q or %q", r.Better, Lower, Higher)
	case r.Date == "":
		return errors.New("date is missing")
	case len(r.Rows) == 0:
		return errors.New("rows are missing")
	}
	if _, err := time.Parse(time.RFC3339, r.Date); err != nil {
		return fmt.Errorf("date %q is not RFC 3339", r.Date)
	}
	seen := make(map[string]bool, len(r.Rows))
	for i, row := range r.Rows {
		switch {
		case strings.TrimSpace(row.Name) == "":
			return fmt.Errorf("rows[%d]: name is missing", i)
		case seen[row.Name]:
			return fmt.Errorf("rows[%d]: name %q appears twice", i, row.Name)
		case !valid(row.Median):
			return fmt.Errorf("rows[%d] %q: median %v is not a finite number >= 0", i, row.Name, row.Median)
		case !valid(row.P90):
			return fmt.Errorf("rows[%d] %q: p90 %v is not a finite number >= 0", i, row.Name, row.P90)
		case row.Runs < 1:
			return fmt.Errorf("rows[%d] %q: runs is %d, want at least 1", i, row.Name, row.Runs)
		}
		seen[row.Name] = true
	}
	return nil
}

// valid is a finite figure >= 0, and not -0, which the site printed as
// "-0.00".
func valid(x float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 && !math.Signbit(x)
}

// MaxName bounds a bench's name: the site names its chart and data files
// after it (chart-NAME-N.svg), and those must stay within a site's file
// names (101 characters); a longer one broke the whole site build.
const MaxName = 64

func isName(s string) bool {
	if len(s) > MaxName {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return s != ""
}
