package site

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/policy"
	"github.com/pinfold/pinfold/site/internal/cdp"
)

// The site in headless Chromium, loaded from the built files both as
// file: URLs and from a loopback HTTP server:
//   - the playground, for each policy file, shows the sha256 the launcher
//     computes (policy.Hash, what `launcher policy hash` prints) and flags
//     exactly the files whose text the launcher refuses, bidi controls by
//     name;
//   - every page can be used from the keyboard alone: the first Tab
//     reaches a visible skip link, Enter on it moves focus to the content,
//     and Tab then visits every link and control in document order, each
//     with a visible focus ring;
//   - every page, at phone width, fits without sideways scrolling, and a
//     screenshot of each (the playground with a flagged file loaded) is
//     written to $PINFOLD_ARTEFACTS (else the test's temp dir).
func TestBrowser(t *testing.T) {
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
	if _, err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := cdp.Launch(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bases := map[string]string{"file": "file://" + dir, "http": serveLoopback(t, dir)}
	pol := t.TempDir()
	for _, scheme := range []string{"file", "http"} {
		t.Run("playground/"+scheme, func(t *testing.T) {
			playgroundCorpus(ctx, t, b, bases[scheme]+"/playground.html", pol)
		})
	}
	t.Run("keyboard", func(t *testing.T) {
		if err := b.Viewport(ctx, 1024, 768, false); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			keyboardWalk(ctx, t, b, bases["http"]+"/"+p.File)
		}
	})
	t.Run("phone", func(t *testing.T) {
		phonePages(ctx, t, b, bases["http"], pol)
	})
}

// serveLoopback serves dir on 127.0.0.1 for the test's life and returns
// its base URL.
func serveLoopback(t *testing.T, dir string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// corpus is the playground's test corpus: a policy's text and the kind
// of the first finding the page must show ("" for none).
var corpus = []struct {
	name, text string
	kind       string
}{
	{"plain.toml", "version = 1\n[workspace]\npath = \"/tmp/x\"\n", ""},
	{"bidi.toml", "version = 1\n# allow \u202e\"lmth.\" \n", "bidi"},
	{"zw.toml", "version = 1\nmode = \"wrap\u200bper\"\n", "zero-width"},
	{"ctl.toml", "version = 1\x07\n", "control"},
	{"bad-utf8.toml", "version = 1\n# \xff\xfe\n", "utf8"},
	{"nbsp.toml", "version\u00a0= 1\n", "space"},
	{"crlf.toml", "version = 1\r\nmode = \"wrapper\"\r\n", ""},
	{"unicode.toml", "version = 1\n# café, 日本語\n", ""},
}

// playgroundCorpus feeds each corpus file to the playground at url and
// compares what it shows with the launcher's own hash and text check.
func playgroundCorpus(ctx context.Context, t *testing.T, b *cdp.Browser, url, pol string) {
	if err := b.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	for _, c := range corpus {
		got := loadPolicy(ctx, t, b, pol, c.name, c.text)
		sum := policy.Hash([]byte(c.text))
		want := hex.EncodeToString(sum[:])
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
}

type shown struct {
	Hash, Line, Verdict string
	Kinds               []string
}

// loadPolicy writes text to pol/name, gives it to the playground's file
// input and waits until the page shows the launcher's hash of it.
func loadPolicy(ctx context.Context, t *testing.T, b *cdp.Browser, pol, name, text string) shown {
	t.Helper()
	path := filepath.Join(pol, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := policy.Hash([]byte(text))
	want := hex.EncodeToString(sum[:])
	if err := b.SetFileInput(ctx, "#policy-file", path); err != nil {
		t.Fatal(err)
	}
	var got shown
	for range 100 {
		err := b.Eval(ctx, `({hash: document.getElementById("hash").textContent, line: document.getElementById("launch-line").textContent,
			verdict: document.getElementById("verdict").textContent,
			kinds: Array.from(document.querySelectorAll("#findings li"), (li) => li.dataset.kind)})`, &got)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hash == want {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: the page shows %q, the launcher's hash is %s; console %v", name, got.Hash, want, b.Console())
	return got
}

// focusables lists, in document order, what the keyboard must reach;
// focused is the index of document.activeElement in it (-1 when it is
// not one of them), with whether it shows a focus ring and lies in the
// viewport.
const focusState = `(() => {
	const all = Array.from(document.querySelectorAll('a[href], input, button, select, textarea, [tabindex]:not([tabindex="-1"])'));
	const el = document.activeElement;
	const r = el.getBoundingClientRect();
	const cs = getComputedStyle(el);
	return {n: all.length, focused: all.indexOf(el), id: el.id, hash: location.hash,
		ring: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2,
		inView: r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth};
})()`

type focus struct {
	N, Focused   int
	ID, Hash     string
	Ring, InView bool
}

func keyboardWalk(ctx context.Context, t *testing.T, b *cdp.Browser, url string) {
	t.Helper()
	page := url[strings.LastIndex(url, "/")+1:]
	state := func() focus {
		var f focus
		if err := b.Eval(ctx, focusState, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	press := func(key string) {
		if err := b.Press(ctx, key, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	// From the top, Tab visits every stop in order.
	var n int
	for i := 0; ; i++ {
		press("Tab")
		f := state()
		n = f.N
		if i == 0 && f.Focused != 0 {
			t.Fatalf("%s: the first Tab focuses stop %d, not the skip link", page, f.Focused)
		}
		if f.Focused != i {
			t.Fatalf("%s: Tab %d focuses stop %d (%q), want %d", page, i+1, f.Focused, f.ID, i)
		}
		if !f.Ring || !f.InView {
			t.Errorf("%s: stop %d (%q): focus ring %v, in view %v", page, i, f.ID, f.Ring, f.InView)
		}
		if i == n-1 {
			break
		}
	}
	if n < len(pages)+2 {
		t.Fatalf("%s: %d stops; the skip link, the site menu and the footer at least", page, n)
	}
	// Skip link: Enter moves focus to the content, and the next Tab
	// lands on the first stop after the site menu.
	if err := b.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	press("Tab")
	press("Enter")
	if f := state(); f.ID != "main" || f.Hash != "#main" {
		t.Fatalf("%s: after Enter on the skip link focus is on %q (hash %q)", page, f.ID, f.Hash)
	}
	press("Tab")
	if f := state(); f.Focused != 1+len(pages) {
		t.Errorf("%s: Tab after the skip link focuses stop %d, want %d", page, f.Focused, 1+len(pages))
	}
}

// phonePages shows each page 375 pixels wide, checks that it does not
// scroll sideways and writes a screenshot of it; the playground's shows
// the bidi file flagged.
func phonePages(ctx context.Context, t *testing.T, b *cdp.Browser, base, pol string) {
	out := os.Getenv("PINFOLD_ARTEFACTS")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.Viewport(ctx, 375, 800, true); err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if err := b.Navigate(ctx, base+"/"+p.File); err != nil {
			t.Fatal(err)
		}
		if p.File == "playground.html" {
			loadPolicy(ctx, t, b, pol, corpus[1].name, corpus[1].text)
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
