package cdp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/png"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newBrowser launches Chromium for one test and closes it afterwards. It
// skips the test when there is no Chromium, unless
// PINFOLD_REQUIRE_ALL_FEATURES=1 demands every feature.
func newBrowser(t *testing.T) *Browser {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("browser tests need chromium: %v", err)
		}
		t.Skipf("skipping: browser tests need chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Launch(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("browser console:\n%s", strings.Join(b.Console(), "\n"))
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// writePage writes an HTML page into dir and returns its file:// URL.
func writePage(t *testing.T, dir, name, html string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A browser leaves nothing behind in the temporary directory once
// closed, even when Chromium was killed: its profile, and the singleton
// socket directory Chromium makes there and removes only on a clean exit
// (TestChromiumDies had left one /tmp/org.chromium.Chromium.* each run).
func TestLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b := newBrowser(t)
	if err := b.Navigate(testContext(t), "about:blank"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Kill(-b.pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}

func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()

	t.Run("title", func(t *testing.T) {
		ctx := testContext(t)
		u := writePage(t, dir, "title.html", `<!doctype html><title>Pinfold hash playground</title><p>hi`)
		if err := b.Navigate(ctx, u); err != nil {
			t.Fatal(err)
		}
		var title string
		if err := b.Eval(ctx, "document.title", &title); err != nil {
			t.Fatal(err)
		}
		if title != "Pinfold hash playground" {
			t.Errorf("title = %q", title)
		}
	})

	t.Run("missing page", func(t *testing.T) {
		err := b.Navigate(testContext(t), (&url.URL{Scheme: "file", Path: filepath.Join(dir, "nope.html")}).String())
		if err == nil || !strings.Contains(err.Error(), "ERR_FILE_NOT_FOUND") {
			t.Errorf("Navigate to a missing file: err = %v", err)
		}
	})

	t.Run("file input", func(t *testing.T) {
		ctx := testContext(t)
		u := writePage(t, dir, "upload.html", `<!doctype html><meta charset=utf-8><title>upload</title>
<input type=file id=f><pre id=out></pre>
<script>
window.changes = 0;
document.getElementById('f').addEventListener('change', async (e) => {
  window.changes++;
  const file = e.target.files[0];
  document.getElementById('out').textContent = file.name + ':' + await file.text();
});
</script>`)
		if err := b.Navigate(ctx, u); err != nil {
			t.Fatal(err)
		}
		input := filepath.Join(t.TempDir(), "hello.txt")
		if err := os.WriteFile(input, []byte("hello from go"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.SetFileInput(ctx, "#f", input); err != nil {
			t.Fatal(err)
		}
		const want = "hello.txt:hello from go"
		var got string
		for range 50 {
			if err := b.Eval(ctx, "document.getElementById('out').textContent", &got); err != nil {
				t.Fatal(err)
			}
			if got == want {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got != want {
			t.Fatalf("output = %q, want %q (the change handler did not run)", got, want)
		}
		var changes int
		if err := b.Eval(ctx, "window.changes", &changes); err != nil {
			t.Fatal(err)
		}
		if changes != 1 {
			t.Errorf("change events = %d, want 1", changes)
		}
		if err := b.SetFileInput(ctx, "#missing", input); err == nil {
			t.Error("SetFileInput with a selector that matches nothing succeeded")
		}
	})

	// A page taller than the viewport, so that the screenshot must reach
	// beyond it; mobile and desktop (which has a classic scrollbar).
	tall := writePage(t, dir, "tall.html", `<!doctype html><meta name=viewport content="width=device-width">
<title>tall</title><style>body{margin:0} div{height:2000px;background:linear-gradient(red,blue)}</style><div></div>`)
	for _, vp := range []struct {
		width, height int
		mobile        bool
	}{{375, 800, true}, {800, 600, false}} {
		name := fmt.Sprintf("viewport %dx%d mobile=%v and screenshot", vp.width, vp.height, vp.mobile)
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			if err := b.Viewport(ctx, vp.width, vp.height, vp.mobile); err != nil {
				t.Fatal(err)
			}
			if err := b.Navigate(ctx, tall); err != nil {
				t.Fatal(err)
			}
			var width int
			if err := b.Eval(ctx, "innerWidth", &width); err != nil {
				t.Fatal(err)
			}
			if width != vp.width {
				t.Errorf("innerWidth = %d, want %d", width, vp.width)
			}
			png, err := b.Screenshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("screenshot does not start with the PNG signature: % x", png[:min(8, len(png))])
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(png))
			if err != nil {
				t.Fatal(err)
			}
			if format != "png" || cfg.Width != vp.width {
				t.Errorf("screenshot is %s %d×%d, want png %d wide", format, cfg.Width, cfg.Height, vp.width)
			}
			if cfg.Height < 2000 {
				t.Errorf("screenshot height %d, want the full 2000px page", cfg.Height)
			}
		})
	}

	t.Run("exception", func(t *testing.T) {
		err := b.Eval(testContext(t), `throw new Error("x")`, nil)
		if err == nil || !strings.Contains(err.Error(), "Error: x") {
			t.Errorf("Eval of a throw: err = %v", err)
		}
		err = b.Eval(testContext(t), `Promise.reject(new Error("async-x"))`, nil)
		if err == nil || !strings.Contains(err.Error(), "async-x") {
			t.Errorf("Eval of a rejected promise: err = %v", err)
		}
	})

	t.Run("await", func(t *testing.T) {
		var got struct {
			N int    `json:"n"`
			S string `json:"s"`
		}
		err := b.Eval(testContext(t), `new Promise(r => setTimeout(() => r({n: 7, s: "ok"}), 10))`, &got)
		if err != nil || got.N != 7 || got.S != "ok" {
			t.Errorf("Eval of a promise = %+v, %v", got, err)
		}
	})

	t.Run("protocol error", func(t *testing.T) {
		err := b.Call(testContext(t), "No.suchMethod", nil, nil)
		if err == nil || !strings.Contains(err.Error(), "No.suchMethod") {
			t.Errorf("Call of an unknown method: err = %v", err)
		}
	})

	t.Run("console", func(t *testing.T) {
		ctx := testContext(t)
		u := writePage(t, dir, "console.html", `<!doctype html><title>console</title>
<script>console.log("hi", 42); setTimeout(() => { throw new Error("late") });</script>`)
		if err := b.Navigate(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := b.Eval(ctx, `new Promise(r => setTimeout(r, 50))`, nil); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(b.Console(), "\n")
		for _, want := range []string{"console.log: hi 42", "uncaught: ", "Error: late"} {
			if !strings.Contains(all, want) {
				t.Errorf("Console() lacks %q:\n%s", want, all)
			}
		}
	})

	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := b.Eval(ctx, `new Promise(() => {})`, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Eval of a promise that never settles: err = %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Eval took %v after its context ended", d)
		}
	})
}

// processesMentioning lists the pids whose command line contains s.
func processesMentioning(s string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func TestClose(t *testing.T) {
	b := newBrowser(t)
	pid, profile := b.pid, b.profile
	if n := len(liveGroupMembers(pid)); n < 2 {
		t.Fatalf("%d live processes in the browser's group, want the browser and its helpers", n)
	}
	if len(processesMentioning(profile)) == 0 {
		t.Fatal("no process mentions the profile dir while the browser runs")
	}
	start := time.Now()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %v", time.Since(start))
	// Zombies reparented to init may linger until init reaps them; they
	// are not running, so only live members count.
	if live := liveGroupMembers(pid); len(live) > 0 {
		t.Errorf("processes %v of group %d still alive after Close", live, pid)
	}
	if !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
		t.Errorf("chromium pid %d still exists after Close", pid)
	}
	if pids := processesMentioning(profile); len(pids) > 0 {
		t.Errorf("processes %v still mention %s after Close", pids, profile)
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("profile dir %s not removed: %v", profile, err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.Eval(testContext(t), "1", nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Eval after Close: err = %v", err)
	}
}

func TestChromiumDies(t *testing.T) {
	b := newBrowser(t)
	errc := make(chan error, 1)
	go func() { errc <- b.Eval(testContext(t), `new Promise(() => {})`, nil) }()
	time.Sleep(200 * time.Millisecond) // let the call get under way
	if err := unix.Kill(-b.pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "chromium exited") {
			t.Fatalf("pending Eval after chromium died: err = %v", err)
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		t.Logf("pending Eval failed %v after the kill: %s", time.Since(killed), first)
	case <-time.After(3 * time.Second):
		t.Fatal("pending Eval did not fail within 3s of chromium dying")
	}
	if err := b.Eval(testContext(t), "1", nil); err == nil {
		t.Error("Eval on a dead browser succeeded")
	}
}

func TestFindOverride(t *testing.T) {
	t.Setenv(envBinary, filepath.Join(t.TempDir(), "no-such-chromium"))
	if _, err := Find(); err == nil {
		t.Error("Find accepted a missing $PINFOLD_CHROMIUM")
	}
	exe := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envBinary, exe)
	if got, err := Find(); err != nil || got != exe {
		t.Errorf("Find() = %q, %v; want %q", got, err, exe)
	}
}

func TestLaunchFailure(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "chromium")
	script := "#!/bin/sh\necho 'fake chromium: cannot open display' >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, err := Launch(testContext(t), fake)
	if err == nil {
		b.Close()
		t.Fatal("Launch of a browser that exits at once succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Launch took %v to notice the exit", d)
	}
	t.Logf("Launch error: %v", err)
	for _, want := range []string{"chromium exited", "fake chromium: cannot open display"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Launch error lacks %q: %v", want, err)
		}
	}
}

func TestReadMessage(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("{\"id\":1}\x00"+strings.Repeat("a", 100)+"\x00{\"id\":"), 16)
	msg, err := readMessage(r, 1000)
	if err != nil || string(msg) != `{"id":1}` {
		t.Fatalf("first message = %q, %v", msg, err)
	}
	msg, err = readMessage(r, 1000)
	if err != nil || len(msg) != 100 {
		t.Fatalf("second message = %d bytes, %v", len(msg), err)
	}
	if _, err := readMessage(r, 1000); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated message: err = %v", err)
	}
	r = bufio.NewReaderSize(strings.NewReader(strings.Repeat("b", 101)+"\x00"), 16)
	if _, err := readMessage(r, 100); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("oversized message: err = %v", err)
	}
}

func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	for i := 0; i < stderrKeep/10+100; i++ {
		io.WriteString(&tb, "line 1234\n")
	}
	io.WriteString(&tb, "last words\n")
	if n := len(tb.buf); n > stderrKeep {
		t.Errorf("buffer holds %d bytes, more than %d", n, stderrKeep)
	}
	tail := string(tb.Tail(25))
	if tail != "line 1234\nlast words\n" {
		t.Errorf("Tail(25) = %q", tail)
	}
}
