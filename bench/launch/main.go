// Command launch measures how long it takes to start /bin/true confined by
// the launcher and by its peers, interleaving the runs, and prints medians
// and ratios to bare /bin/true. With -json FILE it also writes the table
// as a bench/report Report to FILE: one row per tool (median and p90, ms),
// the ratios in its notes.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/pinfold/pinfold/bench/report"
)

type tool struct {
	Name     string
	Argv     []string
	runs     []time.Duration
	Med, P90 float64 // ms
}

func main() {
	n := flag.Int("n", 40, "runs per tool")
	launcher := flag.String("launcher", "bin/launcher", "the launcher binary")
	restrict := flag.String("landlock-restrict", "bin/landlock-restrict", "go-landlock's landlock-restrict, or empty to skip")
	out := flag.String("json", "", "also write the results to this file, as a bench/report JSON report")
	flag.Parse()

	dir, err := os.MkdirTemp("", "pinfold-bench-")
	check(err)
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	check(os.Mkdir(ws, 0o755))
	pol := filepath.Join(dir, "policy.toml")
	text := fmt.Sprintf(`version = 1
[workspace]
path = %q
[files]
read = ["/usr/share", "/etc/passwd"]
write = [%q]
exec = ["/usr/bin", "/usr/lib"]
[network]
mode = "none"
`, ws, ws)
	check(os.WriteFile(pol, []byte(text), 0o644))
	sum := sha256.Sum256([]byte(text))

	truePath := "/usr/bin/true"
	tools := []*tool{
		{Name: "bare", Argv: []string{truePath}},
		{Name: "launcher", Argv: []string{*launcher, "--policy-sha256", hex.EncodeToString(sum[:]), "--policy", pol, "--quiet", "--", truePath}},
		// A reference, not a peer: the launcher's process starting and
		// printing its help, with no policy, sandbox or agent — the floor
		// its Go runtime and package initialisation put under a launch.
		{Name: startOnly, Argv: []string{*launcher, "--help"}},
	}
	if p, err := exec.LookPath("bwrap"); err == nil {
		tools = append(tools, &tool{Name: "bubblewrap", Argv: []string{p, "--unshare-all", "--die-with-parent", "--new-session",
			"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
			"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", ws, ws, "--chdir", ws, "--", truePath}})
	}
	if *restrict != "" {
		if _, err := os.Stat(*restrict); err == nil {
			tools = append(tools, &tool{Name: "landlock-restrict", Argv: []string{*restrict, "-7", "-strict", "-ro", "/usr", "-rw", ws, "--", truePath}})
		}
	}
	if p, err := exec.LookPath("firejail"); err == nil {
		tools = append(tools, &tool{Name: "firejail", Argv: []string{p, "--quiet", "--noprofile", "--net=none", "--private-tmp", truePath}})
	}
	// Warm up each tool once, and make sure it works at all.
	for _, t := range tools {
		if err := exec.Command(t.Argv[0], t.Argv[1:]...).Run(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s does not run: %v\n", t.Name, err)
			os.Exit(1)
		}
	}
	for i := 0; i < *n; i++ { // interleaved, so drift hits every tool alike
		for _, t := range tools {
			start := time.Now()
			check(exec.Command(t.Argv[0], t.Argv[1:]...).Run())
			t.runs = append(t.runs, time.Since(start))
		}
	}
	bare := 0.0
	var notes []string
	fmt.Printf("launch of /usr/bin/true, %d interleaved runs each\n", *n)
	fmt.Printf("%-28s %10s %10s %10s\n", "tool", "median", "p90", "× bare")
	for _, t := range tools {
		slices.Sort(t.runs)
		t.Med = ms(t.runs[len(t.runs)/2])
		t.P90 = ms(t.runs[len(t.runs)*9/10])
		if t.Name == "bare" {
			bare = t.Med
		}
		fmt.Printf("%-28s %8.2fms %8.2fms %9.1f×\n", t.Name, t.Med, t.P90, t.Med/bare)
		if t.Name != "bare" {
			notes = append(notes, fmt.Sprintf("%s: %.1f× bare", t.Name, t.Med/bare))
		}
	}
	for _, t := range tools {
		if t.Name == "bubblewrap" {
			line := fmt.Sprintf("launcher / bubblewrap: %.2f (target ≤ 1); the launcher's start alone (--help) / bubblewrap's whole launch: %.2f", tools[1].Med/t.Med, tools[2].Med/t.Med)
			fmt.Println(line)
			notes = append(notes, line)
		}
	}
	if *out != "" {
		r := report.NewReport("launch", fmt.Sprintf("Time to launch /usr/bin/true bare, confined by the launcher with every Boundary on, and by its peers (%d interleaved runs each).", *n), "ms", report.Lower)
		for _, t := range tools {
			r.Add(t.Name, t.Med, t.P90, len(t.runs))
		}
		r.Notes = notes
		check(r.WriteFile(*out))
	}
}

// startOnly names the reference row of the launcher's bare start.
const startOnly = "reference: launcher --help"

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
