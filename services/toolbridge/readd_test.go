package toolbridge

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverPIDs are the processes of the live sessions' servers.
func (r *rig) serverPIDs() []int {
	r.bridge.mu.Lock()
	defer r.bridge.mu.Unlock()
	var pids []int
	for _, s := range r.bridge.sessions {
		pids = append(pids, s.srv.cmd.Process.Pid)
	}
	return pids
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// A tool added again ends the sessions started before at once, not at
// their next request: their servers (with the token replaced) stop and
// their places are free, so a sandbox whose every place they held starts
// its next session as the tool is now, and their next request is
// answered as gone.
func TestToolAddedAgainEndsTheSessionsBeforeAtOnce(t *testing.T) {
	r := newRig(t, askNone, Settings{Sessions: 2, StartWait: 2 * time.Second}, "TOKEN=old")
	old := []string{r.initSession(), r.initSession()}
	pids := r.serverPIDs()
	if len(pids) != 2 {
		t.Fatalf("%d servers, want 2", len(pids))
	}
	r.addTool("test", "TOKEN=replaced")
	st, sid, body := r.post("test", "", initBody)
	if st != 200 || sid == "" {
		t.Fatalf("a new session after the tool was added again, its 2 places held by sessions before: %d %s", st, body)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("the server %d of a session started before still runs", pid)
		}
	}
	if n := r.bridge.Sessions(); n != 1 {
		t.Errorf("%d sessions, want the new one alone", n)
	}
	for _, s := range old {
		if st, _, body := r.post("test", s, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != 404 || !strings.Contains(body, "gone") {
			t.Errorf("a session started before, after the tool was added again: %d %s", st, body)
		}
	}
}

// A tool added again or removed ends its sessions even when none of them
// makes a request: the reaper reads the definition again at its next
// tick (a tenth of tool_idle), long before the sessions would go idle.
func TestToolAddedAgainOrRemovedEndsSessionsThatMakeNoRequest(t *testing.T) {
	for _, change := range []string{"added again", "removed"} {
		t.Run(change, func(t *testing.T) {
			r := newRig(t, askNone, Settings{Idle: 5 * time.Second}, "TOKEN=old")
			r.initSession()
			r.initSession()
			pids := r.serverPIDs()
			if change == "removed" {
				if err := r.store.Remove("test"); err != nil {
					t.Fatal(err)
				}
			} else {
				r.addTool("test", "TOKEN=replaced")
			}
			deadline := time.Now().Add(3 * time.Second) // before the 5 s idle end
			for r.bridge.Sessions() > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("a tool %s: %d sessions still live with no request, after 3 s", change, r.bridge.Sessions())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// A session leaves the table as its server is told to stop;
			// the server is reaped just after, so its end is waited for.
			for _, pid := range pids {
				waitFor(t, "the server of a session that ended to be gone", func() bool { return gone(pid) })
			}
		})
	}
}

// Removing a tool ends its sessions, each of them, at the first request
// that finds it removed.
func TestToolRemovedEndsEverySessionAtOnce(t *testing.T) {
	r := newRig(t, askNone, Settings{})
	a := r.initSession()
	r.initSession()
	pids := r.serverPIDs()
	if err := r.store.Remove("test"); err != nil {
		t.Fatal(err)
	}
	if st, _, body := r.post("test", a, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != 404 || !strings.Contains(body, "removed") {
		t.Fatalf("after the tool was removed: %d %s", st, body)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("the server %d of a removed tool's session still runs", pid)
		}
	}
	if n := r.bridge.Sessions(); n != 0 {
		t.Errorf("%d sessions of a removed tool", n)
	}
}

// A session still starting when its tool is added again would run as
// the tool was: it is refused as gone once started, its server stopped,
// and the session started after runs as the tool is now.
func TestToolAddedAgainWhileASessionStartsEndsIt(t *testing.T) {
	// The first session's server takes 2 s to start: time enough, on a
	// loaded machine too, for the second session to read the new
	// definition before the first has started.
	r := newRig(t, askNone, Settings{}, "LNK_TEST_START_DELAY=2s", "TOKEN=old")
	first := make(chan reply, 1)
	go func() {
		st, sid, body := r.post("test", "", initBody)
		first <- reply{status: st, body: sid + " " + body}
	}()
	waitFor(t, "the first session to have read the definition", func() bool {
		r.bridge.mu.Lock()
		defer r.bridge.mu.Unlock()
		return r.bridge.seen["test"].read > 0 // taken (sawDefinition), so its server starts as the tool was
	})
	r.addTool("test", "LNK_TEST_START_DELAY=2s", "TOKEN=replaced")
	st, sid, body := r.post("test", "", initBody) // reads the new definition
	if st != 200 || sid == "" {
		t.Fatalf("the session started after: %d %s", st, body)
	}
	got := <-first
	if got.status != 404 || !strings.Contains(got.body, "added again or removed while this session started") {
		t.Fatalf("the session that started as the tool was: %d %s", got.status, got.body)
	}
	if n := r.bridge.Sessions(); n != 1 {
		t.Errorf("%d sessions, want the new one alone", n)
	}
}
