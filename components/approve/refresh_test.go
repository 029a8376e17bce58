package approve

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
)

// A refresh on the channel is no question: the launcher's refresher
// answers it with paths and notes, the terminal is not asked; a channel
// served without one answers with a reason, and an answer too long for
// one line sends the directories holding the paths (protecting more,
// never less) and says so.
func TestChannelRefresh(t *testing.T) {
	a, b := net.Pipe()
	asked := 0
	many := false
	refresh := func() ([]string, []string) {
		asked++
		if many {
			var ps []string
			for i := range 20000 {
				ps = append(ps, fmt.Sprintf("tools/%0100d", i))
			}
			return ps, nil
		}
		return []string{".githooks", "tools/fsmon.sh"}, []string{"x.gitconfig (not read)"}
	}
	done := make(chan struct{})
	go func() { ServeRefresh(a, &Terminal{}, "fs", refresh); close(done) }()
	c := NewClient(b)
	ps, notes, err := c.Refresh()
	if err != nil || strings.Join(ps, ",") != ".githooks,tools/fsmon.sh" || len(notes) != 1 || asked != 1 {
		t.Errorf("refresh: %q %q %v (%d calls)", ps, notes, err, asked)
	}
	// Questions still go to the terminal (none here: no).
	if ans := c.Ask("write x", "", Approve); ans.Yes || asked != 1 {
		t.Errorf("a question answered %+v, refresher called %d times", ans, asked)
	}
	many = true
	ps, notes, err = c.Refresh()
	if err != nil || strings.Join(ps, ",") != "tools" || len(notes) != 1 || !strings.Contains(notes[0], "sent as the 1 directories") {
		t.Errorf("a long answer: %d paths, notes %q, %v", len(ps), notes, err)
	}
	b.Close()
	<-done

	a, b = net.Pipe()
	go Serve(a, &Terminal{}, "bash")
	if _, _, err := NewClient(b).Refresh(); err == nil || !strings.Contains(err.Error(), "reads no git configs") {
		t.Errorf("a channel without a refresher: %v", err)
	}
	b.Close()
	var none *Client
	if _, _, err := none.Refresh(); err == nil {
		t.Error("no channel: no error")
	}
}

// A recheck (the component found an event of the launcher's watch on
// the git configs to concern one) is answered by the recheck function,
// with the watch's names, as a refresh asked with RefreshWatch is; a
// channel with none says so. With no terminal (nil: nobody
// can be asked) questions are answered no, saying why, and the configs
// are still read.
func TestChannelRecheck(t *testing.T) {
	a, b := net.Pipe()
	refreshes, rechecks := 0, 0
	refresh := func() ([]string, []string, []string) { refreshes++; return []string{"a"}, nil, []string{"config"} }
	recheck := func() ([]string, []string, []string) {
		rechecks++
		return []string{"hk"}, []string{"x (not read)"}, []string{"config", ".gitconfig"}
	}
	done := make(chan struct{})
	go func() { ServeChecked(a, nil, "fs", refresh, recheck); close(done) }()
	c := NewClient(b)
	ps, notes, watch, err := c.Recheck()
	if err != nil || strings.Join(ps, ",") != "hk" || len(notes) != 1 || strings.Join(watch, ",") != "config,.gitconfig" || rechecks != 1 || refreshes != 0 {
		t.Errorf("recheck: %q %q %q %v (%d rechecks, %d refreshes)", ps, notes, watch, err, rechecks, refreshes)
	}
	if ps, _, watch, err := c.RefreshWatch(); err != nil || strings.Join(ps, ",") != "a" || strings.Join(watch, ",") != "config" || refreshes != 1 {
		t.Errorf("refresh: %q %q %v", ps, watch, err)
	}
	if ans := c.Ask("write x", "", Approve); ans.Yes || !strings.Contains(ans.Reason, "no terminal") {
		t.Errorf("a question with no terminal: %+v", ans)
	}
	b.Close()
	<-done

	a, b = net.Pipe()
	go ServeRefresh(a, &Terminal{}, "fs", func() ([]string, []string) { return nil, nil })
	if _, _, _, err := NewClient(b).Recheck(); err == nil || !strings.Contains(err.Error(), "watches no git configs") {
		t.Errorf("a channel without a recheck: %v", err)
	}
	b.Close()
}

// No answer is longer than the component reads (maxAnswerLine): one that
// was broke the channel, every later question answered no. Notes are
// cut, names too many for the answer become WatchAll, and the protected
// paths the directories that hold them: none is dropped, each is said.
func TestChannelAnswerFits(t *testing.T) {
	var protect, notes, watch []string
	for i := range 12000 {
		protect = append(protect, fmt.Sprintf("d%d/%0100d/hooks", i%3000, i))
		watch = append(watch, fmt.Sprintf("%d/%0100d", i+1, i))
	}
	for range 50 {
		notes = append(notes, strings.Repeat("n", 100<<10))
	}
	big := func() ([]string, []string, []string) { return protect, notes, watch }
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() { ServeChecked(a, nil, "fs", big, big); close(done) }()
	defer func() { b.Close(); <-done }()
	c := NewClient(b)
	ps, ns, ws, err := c.Recheck()
	if err != nil {
		t.Fatalf("recheck: %v", err)
	}
	if strings.Join(ws, ",") != WatchAll {
		t.Errorf("watch: %d names, want %q", len(ws), WatchAll)
	}
	for _, p := range protect {
		if !slices.ContainsFunc(ps, func(q string) bool { return p == q || strings.HasPrefix(p, q+"/") }) {
			t.Errorf("%q is not protected by what was sent (%d paths)", p, len(ps))
			break
		}
	}
	if len(ps) != 3000 {
		t.Errorf("%d paths sent, want the 3000 top-level directories", len(ps))
	}
	said := strings.Join(ns, "\n")
	for _, want := range []string{"and 30 more", "(cut)", "12000 names", "12000 paths", "sent as the 3000 directories"} {
		if !strings.Contains(said, want) {
			t.Errorf("the notes do not say %q: %.300q", want, said)
		}
	}
	// The channel still works: a question is answered for itself.
	if ans := c.Ask("write x", "", Approve); ans.Yes || !strings.Contains(ans.Reason, "no terminal") {
		t.Errorf("a question after the long answer: %+v", ans)
	}
	// Paths too many even as top-level names: a refusal, nothing dropped
	// silently.
	protect = protect[:0]
	for i := range 20000 {
		protect = append(protect, fmt.Sprintf("%0100d", i))
	}
	if ps, _, _, err := c.Recheck(); err == nil || !strings.Contains(err.Error(), "too many") {
		t.Errorf("20000 top-level paths: %d sent, %v; want a refusal", len(ps), err)
	}
	if ans := c.Ask("write x", "", Approve); ans.Yes || !strings.Contains(ans.Reason, "no terminal") {
		t.Errorf("a question after the refusal: %+v", ans)
	}
}

// A path is sent once, cut to d names, and not beneath another sent.
func TestProtectAtDepth(t *testing.T) {
	got := protectAtDepth([]string{"a/c/x", "a b/y", "a", "a/c", "b/c/d", "b/e", "c"}, 2)
	if want := "a,a b/y,b/c,b/e,c"; strings.Join(got, ",") != want {
		t.Errorf("got %q, want %s", got, want)
	}
}
