package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sessions whose ids and progress tokens collide on purpose each get
// their own answers and their own progress, and nothing of another's.
func TestNoAnswerOrProgressCrossesSessions(t *testing.T) {
	r := newRig(t)
	r.run(time.Minute)
	const sessions, calls = 6, 15
	var first json.RawMessage
	conns := make([]*conn, sessions)
	for i := range conns {
		conns[i] = r.dial()
		res := conns[i].initialize(1)
		if first == nil {
			first = res
		} else if string(res) != string(first) {
			t.Fatalf("a repeated initialize got %s, not the first's %s", res, first)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- c.exchange(fmt.Sprintf("s%d", i), calls)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// exchange sends calls requests, ids 1…calls (the same in every session),
// progress token "p", and checks every answer and progress is its own.
func (c *conn) exchange(tag string, calls int) error {
	for i := 1; i <= calls; i++ {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","arguments":{"text":"%s-%d"},"_meta":{"progressToken":"p"}}}`, i, tag, i)
	}
	answered, progress := map[string]bool{}, 0
	for len(answered) < calls {
		m, err := c.next()
		if err != nil {
			return fmt.Errorf("%s: %v", tag, err)
		}
		if string(m["method"]) == `"notifications/progress"` {
			var p struct {
				Token   string `json:"progressToken"`
				Message string `json:"message"`
			}
			json.Unmarshal(m["params"], &p)
			if p.Token != "p" || !strings.HasPrefix(p.Message, tag+"-") {
				return fmt.Errorf("%s got another's progress: %s", tag, m["params"])
			}
			progress++
			continue
		}
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		json.Unmarshal(m["result"], &res)
		if len(res.Content) == 0 || res.Content[0].Text != tag+"-"+string(m["id"]) {
			return fmt.Errorf("%s: answer %s to id %s is not its own", tag, m["result"], m["id"])
		}
		answered[string(m["id"])] = true
	}
	if progress == 0 {
		return fmt.Errorf("%s got no progress", tag)
	}
	return nil
}

func TestPingIsAnsweredByTheHubAndListChangedGoesToEverySession(t *testing.T) {
	r := newRig(t)
	r.run(time.Minute)
	a, b := r.dial(), r.dial()
	a.initialize(7)
	b.initialize(7)
	a.send(`{"jsonrpc":"2.0","id":"x","method":"ping"}`)
	if m, err := a.next(); err != nil || string(m["id"]) != `"x"` || string(m["result"]) != `{}` {
		t.Fatalf("ping: %v %v", m, err)
	}
	if got := a.call(8, "grow", "one"); got != "grew" {
		t.Fatalf("grow: %q", got)
	}
	for _, c := range []*conn{b} {
		m, err := c.next()
		if err != nil || string(m["method"]) != `"notifications/tools/list_changed"` {
			t.Fatalf("the other session: %v %v", m, err)
		}
	}
}

// A session that stops reading is ended at 64 unread answers; the others
// go on.
func TestSlowReaderEndedWhileOthersGoOn(t *testing.T) {
	r := newRig(t)
	_, slow := r.run(time.Minute)
	other := r.dial()
	slow.initialize(1)
	other.initialize(1)
	for i := range 2 * MaxUnread {
		slow.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{}}}`, i+2)
	}
	waitFor(t, "the slow reader to be ended", func() bool { return strings.Contains(r.readLog(), "64 answers unread") })
	for i := range 20 {
		if got := other.call(100+i, "echo", "on"); got != "on" {
			t.Fatalf("the other session: %q", got)
		}
	}
	// The ended session's connection is closed: reading it ends.
	slow.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, err := slow.next(); err != nil {
			if errors.Is(err, errTooLong) {
				t.Fatal(err)
			}
			break
		}
	}
}

func TestOneHubPerSocket(t *testing.T) {
	r := newRig(t)
	r.run(time.Minute)
	err := Run(t.Context(), Config{Dir: r.dir, Name: "shared", Key: r.key})
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("a second hub: %v, want ErrRunning", err)
	}
}

func TestAKeyThatNoLongerNamesTheToolIsRefused(t *testing.T) {
	r := newRig(t)
	old := r.key
	r.define("LNK_TEST_HUB_SERVER=1", "API_TOKEN=another")
	if old == r.key {
		t.Fatal("another token left the key the same")
	}
	if err := Run(t.Context(), Config{Dir: r.dir, Name: "shared", Key: old}); !errors.Is(err, ErrRedefined) {
		t.Fatalf("a hub for the old key: %v, want ErrRedefined", err)
	}
}

// A tool defined again gets a hub of its own; the old one serves its
// session on, and stops once that session leaves, killing its server.
func TestRedefinedToolsOldHubStopsOnceIdle(t *testing.T) {
	r := newRig(t)
	done, c := r.run(time.Hour)
	c.initialize(1)
	c.call(2, "spawn", "")
	oldMark := r.mark
	r.mark = "new-" + oldMark
	r.define("LNK_TEST_HUB_SERVER=1")
	if got := c.call(3, "echo", "still"); got != "still" {
		t.Fatalf("the old hub's session: %q", got)
	}
	select {
	case err := <-done:
		t.Fatalf("the old hub stopped with a session: %v", err)
	default:
	}
	c.c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the old hub did not stop once idle")
	}
	r.mark = oldMark
	waitFor(t, "the old server and its child to be gone", func() bool { return len(r.marked()) == 0 })
}

func TestIdleHubKillsItsServersWholeGroup(t *testing.T) {
	r := newRig(t)
	done, c := r.run(time.Second)
	c.initialize(1)
	c.call(2, "spawn", "")
	if n := len(r.marked()); n < 2 {
		t.Fatalf("%d marked processes, want the server and its child", n)
	}
	c.c.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle hub did not stop")
	}
	waitFor(t, "the server and its child to be gone", func() bool { return len(r.marked()) == 0 })
}

// Many makers of the machine key at once, in one process or several, all
// get the one key.
func TestKeyMadeOnceByManyAtOnce(t *testing.T) {
	r := newRig(t)
	os.Remove(filepath.Join(toolsDir(r.dir), ".key"))
	keys := make(chan string, 16)
	for range 16 {
		go func() {
			k, err := Key(r.dir, r.def)
			if err != nil {
				t.Error(err)
			}
			keys <- k
		}()
	}
	first := <-keys
	for range 15 {
		if k := <-keys; k != first {
			t.Fatalf("two keys made: %s %s", first, k)
		}
	}
}

// A server that writes while it reads nothing never stalls the hub's
// reader: its pings are answered through a queue of their own (dropped
// once full), and what follows them still reaches the session.
func TestServerThatReadsNothingNeverStallsTheHub(t *testing.T) {
	r := newRig(t)
	r.define("LNK_TEST_HUB_SERVER=deaf")
	_, c := r.run(time.Minute)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	for {
		m, err := c.next()
		if err != nil {
			t.Fatal(err)
		}
		if string(m["method"]) == `"notifications/tools/list_changed"` {
			return
		}
	}
}
