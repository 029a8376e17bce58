package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// Finished sessions' logs go once they are older than keepLogs, beyond
// keepLogBytes (newest kept first) or beyond keepLogSessions; a running
// session's directory (it holds its lock) and what is not a session's
// stay whatever their age and size.
func TestPruneLogs(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration, size int64, lock bool) string {
		t.Helper()
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o711); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "fs.log"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // sparse: costs no memory
			t.Fatal(err)
		}
		f.Close()
		if lock {
			if err := os.WriteFile(filepath.Join(dir, "lock"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const mib = 1 << 20
	newest := mk("00000000000000a1", time.Minute, 100*mib, false)
	second := mk("00000000000000a2", time.Hour, 100*mib, false)
	third := mk("00000000000000a3", 2*time.Hour, 100*mib, false) // 300 MiB with the two newer
	old := mk("00000000000000a4", 8*24*time.Hour, 1, false)
	running := mk("00000000000000a5", 30*24*time.Hour, 400*mib, true)
	other := mk("not-a-session", 30*24*time.Hour, 400*mib, false)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	pruneLogs(root, entries)
	for dir, want := range map[string]bool{newest: true, second: true, third: false, old: false, running: true, other: true} {
		_, err := os.Lstat(dir)
		if got := err == nil; got != want {
			t.Errorf("%s: kept = %v, want %v", filepath.Base(dir), got, want)
		}
	}

	// The count bound: the oldest beyond keepLogSessions goes.
	root = t.TempDir()
	for i := range keepLogSessions + 1 {
		dir := filepath.Join(root, fmt.Sprintf("%016x", i))
		if err := os.Mkdir(dir, 0o711); err != nil {
			t.Fatal(err)
		}
		when := now.Add(-time.Duration(i) * time.Second) // 0 is the newest
		if err := os.Chtimes(dir, when, when); err != nil {
			t.Fatal(err)
		}
	}
	entries, err = os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	pruneLogs(root, entries)
	left, _ := os.ReadDir(root)
	if len(left) != keepLogSessions {
		t.Errorf("%d sessions left, want %d", len(left), keepLogSessions)
	}
	if _, err := os.Lstat(filepath.Join(root, fmt.Sprintf("%016x", keepLogSessions))); err == nil {
		t.Error("the oldest session beyond the count is still there")
	}
}

// The summary counts requests by the component's own fields, a quoted
// value read whole, and says when a component's log was cut: a hunt's agent
// filled fs's log so that its later write went unlogged, and the summary
// said every request was denied.
func TestSummaryReadsLogsHonestly(t *testing.T) {
	dir := t.TempDir()
	log := strings.Join([]string{
		`time=2026-12-01T12:00:00Z level=INFO msg=request component=fs caller=agent op=write allowed=true reason=allowed rule=workspace detail=""`,
		`time=2026-12-01T12:00:01Z level=INFO msg=request component=fs caller=agent op=stat allowed=false reason=no_rule rule=fs.beneath detail="x allowed=false y msg=refused level=ERROR"`,
		`time=2026-12-01T12:00:02Z level=WARN msg=refused component=fs caller="uid 65534" reason=peer_uid more_not_logged=41`,
		// A certificate's name the agent chose, in caller=, tries to add
		// to the count and to wrap it negative (a hunt).
		`time=2026-12-01T12:00:03Z level=WARN msg=refused component=fs caller="x more_not_logged=9223372036854775807 y" reason=handshake detail="bad certificate"`,
		`time=2026-12-01T12:00:04Z level=WARN msg=refused component=fs caller="x \" more_not_logged=1 y" reason=handshake`,
		"log: over 33554432 bytes: the rest of this component's log is dropped",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "fs.log"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	// net's proxy logs the HTTP requests it decides as "allowed" and
	// "refused" (with a method): requests and denials, not refused
	// connections.
	netLog := strings.Join([]string{
		`time=2026-12-01T12:00:00Z level=INFO msg=allowed component=net client=127.0.0.1:5 method=CONNECT target=example.com:443 addr=93.184.215.14:443`,
		`time=2026-12-01T12:00:01Z level=WARN msg=refused component=net client=127.0.0.1:6 method=GET target=http://10.0.0.1/ rule=ssrf.private reason=private`,
		`time=2026-12-01T12:00:02Z level=WARN msg=refused component=net host=api.example.com method=POST rule=secrets reason=reflected`,
		`time=2026-12-01T12:00:03Z level=WARN msg=refused component=net caller=unknown reason=handshake detail=x`,
		// A tunnel allowed above, then closed for its first message:
		// one request, denied.
		`time=2026-12-01T12:00:04Z level=WARN msg=refused component=net client=127.0.0.1:5 method=CONNECT target=example.com:443 decision=deny rule=tunnel.sni reason=sni-mismatch detail="server_name \"evil.test\" is not the CONNECT host example.com"`,
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "net.log"), []byte(netLog), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Session{Dir: dir, procs: []*proc{{role: pki.FS}, {role: pki.Net}}}
	got := s.Summary()
	for _, want := range []string{"fs 2 requests, 1 denied", "44 connections refused", "LOG CUT", "net 3 requests, 3 denied, 1 connections refused"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "errors") {
		t.Errorf("summary %q counts an error the agent's text named", got)
	}
}
