package hub

import (
	"strings"
	"testing"
	"time"
)

// The server's answer over MaxLine (the tool bridge's 8 MiB cap) ends
// the server, its whole group, though it was still writing it: the hub
// stops and its sessions' connections close, so the bridge answers the
// call as gone rather than waiting. An answer within the cap passes
// whole (the control).
func TestAnAnswerOverTheCapEndsTheServer(t *testing.T) {
	r := newRig(t)
	done, c := r.run(time.Minute)
	c.initialize(1)
	if got := c.call(2, "big", itoa(MaxLine-4096)); len(got) != MaxLine-4096 {
		t.Fatalf("an answer within the cap: %d bytes", len(got))
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"big","arguments":{"text":%q}}}`, itoa(MaxLine+4096))
	if m, err := c.next(); err == nil {
		t.Fatalf("an answer over the cap reached the session: %.200s", m)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the hub did not stop once its server ended")
	}
	waitFor(t, "the server to be gone", func() bool { return len(r.marked()) == 0 })
	if log := r.readLog(); !strings.Contains(log, "refused: "+errTooLong.Error()) {
		t.Errorf("the hub's log: %s", log)
	}
}
