package policy

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the # check and # want lines of testdata/invalid and testdata/live from what Parse and CheckLive report")

// Each file in testdata/invalid begins (after a byte-order mark, for the
// file that tests one) with two lines naming the first problem Parse must
// report:
//
//	# check: NAME
//	# want: LINE: KEY: MESSAGE
//
// The want line is Problem.String(). The file's name starts with the check.
const (
	checkPrefix = "# check: "
	wantPrefix  = "# want: "
	bom         = "\ufeff"
)

type header struct{ check, want string }

func readHeader(data []byte) (header, error) {
	lines := strings.SplitN(strings.TrimPrefix(string(data), bom), "\n", 3)
	if len(lines) < 3 {
		return header{}, errors.New("shorter than the two header lines")
	}
	check, ok1 := strings.CutPrefix(strings.TrimSuffix(lines[0], "\r"), checkPrefix)
	want, ok2 := strings.CutPrefix(strings.TrimSuffix(lines[1], "\r"), wantPrefix)
	if !ok1 || !ok2 {
		return header{}, fmt.Errorf("the first two lines are not %q and %q", checkPrefix+"NAME", wantPrefix+"PROBLEM")
	}
	return header{check, want}, nil
}

// writeHeader replaces the two header lines, keeping every other byte.
func writeHeader(data []byte, h header) []byte {
	prefix := ""
	rest := string(data)
	if r, ok := strings.CutPrefix(rest, bom); ok {
		prefix, rest = bom, r
	}
	lines := strings.SplitN(rest, "\n", 3)
	return []byte(prefix + checkPrefix + h.check + "\n" + wantPrefix + h.want + "\n" + lines[2])
}

func invalidFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/invalid/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/invalid/*.toml (%v)", err)
	}
	return files
}

func TestInvalidFiles(t *testing.T) {
	for _, file := range invalidFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first := parseErr(t, name, data).Problems[0]
			got := header{first.Check, first.String()}
			if *update {
				if err := os.WriteFile(file, writeHeader(data, got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := readHeader(data)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if got != want {
				t.Errorf("first problem:\n got  check %q: %s\n want check %q: %s", got.check, got.want, want.check, want.want)
			}
			if name != want.check && !strings.HasPrefix(name, want.check+"-") {
				t.Errorf("file %s is not named after its check %q", file, want.check)
			}
		})
	}
}

// TestEveryCheckHasAFile fails when a named check of validate.go has no
// file in testdata/invalid whose first problem it reports.
func TestEveryCheckHasAFile(t *testing.T) {
	covered := map[string]int{}
	for _, file := range invalidFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if h, err := readHeader(data); err == nil {
			covered[h.check]++
		}
	}
	for _, c := range Checks() {
		if covered[c] == 0 {
			t.Errorf("check %q has no testdata/invalid/%s*.toml reporting it first", c, c)
		}
	}
	// The checks outside validate.go.
	for _, c := range []string{"syntax", "text", "unknown-key", "value", "version"} {
		if covered[c] == 0 {
			t.Errorf("check %q has no file in testdata/invalid", c)
		}
	}
}

// Hints are not part of Problem.String; the files that need one are pinned
// here.
func TestHints(t *testing.T) {
	tests := map[string]string{
		"unknown-key-typo":               `did you mean "read"?`,
		"unknown-key-miscased-table":     `did you mean "files"?`,
		"unknown-key-miscased-key":       `did you mean "version"?`,
		"unknown-key-top":                "known keys here: version, mode, workspace, files, network, limits, env, secrets, commands, backups, code_mode",
		"unknown-key-second-secret":      "known keys here: name, hosts, header, template",
		"workspace-required":             `add [workspace] with path = "/absolute/dir"`,
		"write-exec-overlap-beneath":     "keep written and executable trees apart; build outputs run from a write path are refused by design",
		"network-keys-connect-in-none":   `remove it, or set mode = "ports"`,
		"network-keys-proxy-no-allow":    `list hosts in allow, or use mode = "none"`,
		"components-only-secrets":        `set mode = "components" (needs root), or remove it`,
		"secrets-need-proxy":             `set [network] mode = "proxy"`,
		"value-path-relative":            "",
		"syntax-missing-equals":          "",
		"text-bidi-comment":              "",
		"version-missing":                "",
		"duplicate-entry-path":           "",
		"write-exec-overlap-equal":       "keep written and executable trees apart; build outputs run from a write path are refused by design",
		"network-keys-ports-empty":       `list the ports, or use mode = "none"`,
		"components-only-commands":       `set mode = "components" (needs root), or remove it`,
		"unknown-key-version-in-table":   "known keys here: path",
		"workspace-required-empty-table": `add [workspace] with path = "/absolute/dir"`,
	}
	for name, want := range tests {
		data, err := os.ReadFile(filepath.Join("testdata/invalid", name+".toml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := parseErr(t, name, data).Problems[0].Hint; got != want {
			t.Errorf("%s: hint %q, want %q", name, got, want)
		}
	}
}
