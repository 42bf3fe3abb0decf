package toolbridge

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
)

var askNone = map[string]caps.Tool{"test": {AskNone: true}}

func TestAtMostSessionsThenTheWaitGets429(t *testing.T) {
	r := newRig(t, askNone, Settings{Sessions: 2, Starts: 2, StartWait: 300 * time.Millisecond})
	a := r.initSession()
	r.initSession()
	st, _, body := r.post("test", "", initBody)
	if st != 429 || !strings.Contains(body, "at most 2") {
		t.Fatalf("the third session: %d %s", st, body)
	}
	// A session that ends frees its place for the next.
	c, _ := net.Dial("unix", r.sock)
	req, _ := http.NewRequest("DELETE", "http://127.0.0.1/mcp/test", nil)
	req.Header.Set(SessionHeader, a)
	req.Write(c)
	http.ReadResponse(bufio.NewReader(c), req)
	c.Close()
	waitFor(t, "the ended session's place", func() bool { return r.bridge.Sessions() == 1 })
	r.initSession()
	if st, _, _ := r.post("test", a, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != 404 {
		t.Errorf("a request in the ended session: %d, want 404 (gone)", st)
	}
}

// At most tool_starts sessions start at once: each server records when
// its start began and ended, and no more than that many overlap; the
// rest wait their turn and start.
func TestAtMostStartsAtOnceTheRestWaitTheirTurn(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	r := newRig(t, askNone, Settings{Sessions: 8, Starts: 2, StartWait: 20 * time.Second}, "LNK_TEST_START_DELAY=300ms", "LNK_TEST_STARTS="+starts)
	const clients = 5
	done := make(chan int, clients)
	for range clients {
		go func() {
			st, _, _ := r.post("test", "", initBody)
			done <- st
		}()
	}
	for range clients {
		if st := <-done; st != 200 {
			t.Errorf("a session waiting its turn: %d, want 200", st)
		}
	}
	if n := r.bridge.Sessions(); n != clients {
		t.Errorf("%d sessions, want %d", n, clients)
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var began, ended int64
		if _, err := fmt.Sscanf(line, "%d %d", &began, &ended); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		edges = append(edges, edge{began, +1}, edge{ended, -1})
	}
	if len(edges) != 2*clients {
		t.Fatalf("%d starts recorded, want %d: %s", len(edges)/2, clients, b)
	}
	sort.Slice(edges, func(i, j int) bool {
		return edges[i].at < edges[j].at || edges[i].at == edges[j].at && edges[i].delta < edges[j].delta
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	if most != 2 {
		t.Errorf("%d servers started at once, want tool_starts = 2 (and no fewer, with %d waiting)", most, clients)
	}
}

func TestIdleSessionEnds(t *testing.T) {
	r := newRig(t, askNone, Settings{Idle: 150 * time.Millisecond})
	sid := r.initSession()
	waitFor(t, "the idle session to end", func() bool { return r.bridge.Sessions() == 0 })
	if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != 404 || !strings.Contains(body, "gone") {
		t.Errorf("after idle: %d %s", st, body)
	}
}

func TestToolAddedAgainOrRemovedEndsItsSessions(t *testing.T) {
	r := newRig(t, askNone, Settings{})
	sid := r.initSession()
	r.addTool("test", "TOKEN=replaced")
	if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != 404 || !strings.Contains(body, "gone") {
		t.Errorf("after the tool was added again: %d %s", st, body)
	}
	if r.bridge.Sessions() != 0 {
		t.Error("the old session still runs")
	}
	sid = r.initSession() // the next session runs as the tool is now
	if err := r.store.Remove("test"); err != nil {
		t.Fatal(err)
	}
	if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != 404 || !strings.Contains(body, "removed") {
		t.Errorf("after the tool was removed: %d %s", st, body)
	}
	if r.bridge.Sessions() != 0 {
		t.Error("a removed tool's session still runs")
	}
}

func TestClientClosingBeforeItsSessionStartedHoldsNoPlace(t *testing.T) {
	r := newRig(t, askNone, Settings{Sessions: 1, StartWait: 20 * time.Second}, "LNK_TEST_START_DELAY=500ms")
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp/test", strings.NewReader(initBody))
	req.Write(c)
	c.Close()
	waitFor(t, "the abandoned start to be logged", func() bool {
		for _, e := range r.logged() {
			if strings.HasPrefix(e.Outcome, "abandoned") {
				return true
			}
		}
		return false
	})
	if r.bridge.Sessions() != 0 {
		t.Fatal("an abandoned start kept a session")
	}
	r.initSession() // its one place is free
}

func TestHalfCloseIsAnswered(t *testing.T) {
	r := newRig(t, askNone, Settings{}, "LNK_TEST_START_DELAY=300ms")
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp/test", strings.NewReader(initBody))
	req.Write(c)
	c.(*net.UnixConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get(SessionHeader) == "" {
		t.Fatalf("a half-closed client: %v %v", resp, err)
	}
}

func TestClientClosingBeforeItsAnswerLetsTheCallGo(t *testing.T) {
	mark := t.TempDir() + "/mark"
	r := newRig(t, askNone, Settings{}, "LNK_TEST_MARK="+mark)
	sid := r.initSession()
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp/test", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"text":"went"}}}`))
	req.Header.Set(SessionHeader, sid)
	req.Write(c)
	c.Close()
	waitFor(t, "the call to finish", func() bool {
		for _, e := range r.logged() {
			if e.Call == "slow" && e.Outcome == "passed" {
				return true
			}
		}
		return false
	})
	if st, body := r.call(sid, "echo", "still"); st != 200 || !strings.Contains(body, "still") {
		t.Errorf("the session after a client left mid-call: %d %s", st, body)
	}
}
