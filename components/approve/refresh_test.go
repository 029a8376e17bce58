package approve

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// A refresh on the channel is no question: the launcher's refresher
// answers it with paths and notes, the terminal is not asked; a channel
// served without one answers with a reason, and an answer too long for
// one line keeps the paths that fit and says how many it left out.
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
	if err != nil || len(ps) == 0 || len(ps) >= 20000 || len(notes) != 1 || !strings.Contains(notes[0], "were not sent") {
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
