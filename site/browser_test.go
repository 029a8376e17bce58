package site

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/policy"
	"github.com/pinfold/pinfold/site/internal/cdp"
)

// The playground in headless Chromium, loaded from the built site as a
// file: for each policy file it shows the sha256 the launcher computes
// (policy.Hash, what `launcher policy hash` prints) and flags exactly the
// files whose text the launcher refuses, bidi controls by name. Each
// page, at phone width, fits without sideways scrolling; a screenshot of
// each is written to $PINFOLD_ARTEFACTS (else the test's temp dir).
func TestBrowserPlayground(t *testing.T) {
	bin, err := cdp.Find()
	if err != nil {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("browser tests need chromium: %v", err)
		}
		t.Skipf("browser tests need chromium: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := cdp.Launch(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(ctx, "file://"+filepath.Join(dir, "playground.html")); err != nil {
		t.Fatal(err)
	}
	pol := t.TempDir()
	for _, c := range []struct {
		name, text string
		kind       string // a finding's data-kind, "" for none
	}{
		{"plain.toml", "version = 1\n[workspace]\npath = \"/tmp/x\"\n", ""},
		{"bidi.toml", "version = 1\n# allow \u202e\"lmth.\" \n", "bidi"},
		{"zw.toml", "version = 1\nmode = \"wrap\u200bper\"\n", "zero-width"},
		{"ctl.toml", "version = 1\x07\n", "control"},
		{"bad-utf8.toml", "version = 1\n# \xff\xfe\n", "utf8"},
		{"nbsp.toml", "version\u00a0= 1\n", "space"},
		{"crlf.toml", "version = 1\r\nmode = \"wrapper\"\r\n", ""},
		{"unicode.toml", "version = 1\n# café, 日本語\n", ""},
	} {
		path := filepath.Join(pol, c.name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := policy.Hash([]byte(c.text))
		want := hex.EncodeToString(sum[:])
		if err := b.SetFileInput(ctx, "#policy-file", path); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Hash, Line, Verdict string
			Kinds               []string
		}
		for range 100 {
			err := b.Eval(ctx, `({hash: document.getElementById("hash").textContent, line: document.getElementById("launch-line").textContent,
				verdict: document.getElementById("verdict").textContent, name: document.getElementById("file-name").textContent,
				kinds: Array.from(document.querySelectorAll("#findings li"), (li) => li.dataset.kind)})`, &got)
			if err != nil {
				t.Fatal(err)
			}
			if got.Hash == want {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got.Hash != want {
			t.Fatalf("%s: the page shows %q, the launcher's hash is %s; console %v", c.name, got.Hash, want, b.Console())
		}
		if !strings.Contains(got.Line, "launcher --policy-sha256 "+want+" --policy "+c.name+" -- ") {
			t.Errorf("%s: launch line %q", c.name, got.Line)
		}
		_, perr := policy.Parse(c.name, []byte(c.text))
		refusedText := perr != nil && c.kind != ""
		if (len(got.Kinds) > 0) != refusedText {
			t.Errorf("%s: the page flags %v; the launcher: %v", c.name, got.Kinds, perr)
		}
		if c.kind != "" && (len(got.Kinds) == 0 || got.Kinds[0] != c.kind) {
			t.Errorf("%s: want a %s finding, got %v (%s)", c.name, c.kind, got.Kinds, got.Verdict)
		}
	}
	out := os.Getenv("PINFOLD_ARTEFACTS")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if err := b.Viewport(ctx, 375, 800, true); err != nil {
			t.Fatal(err)
		}
		if err := b.Navigate(ctx, "file://"+filepath.Join(dir, p.File)); err != nil {
			t.Fatal(err)
		}
		var fits bool
		if err := b.Eval(ctx, `document.documentElement.scrollWidth <= window.innerWidth`, &fits); err != nil {
			t.Fatal(err)
		}
		if !fits {
			t.Errorf("%s scrolls sideways at 375 px", p.File)
		}
		png, err := b.Screenshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(out, strings.TrimSuffix(p.File, ".html")+"-375.png")
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", out)
}
