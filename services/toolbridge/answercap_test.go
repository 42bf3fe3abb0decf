package toolbridge

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
)

// A server's answer over the bridge's cap (MaxBody, as on a request)
// ends its server, which was still writing it, blocked on a pipe the
// bridge no longer reads: the call is answered as gone (404, start
// another with initialize) rather than waiting for ever, the session
// ends, its place is freed for the next session, and the server's
// process is gone. An answer within the cap passes whole (the positive
// control).
func TestAnAnswerOverTheCapEndsItsServerAndFreesThePlace(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	// One place, and a short wait for it: a place never freed is a 429.
	r := newRig(t, map[string]caps.Tool{"test": {AskNone: true}}, Settings{Sessions: 1, StartWait: 10 * time.Second}, "LNK_TEST_PIDS="+pids, "LNK_TEST_BIG=1")

	sid := r.initSession()
	within := MaxBody - 4096
	st, body := r.call(sid, "big", strconv.Itoa(within))
	if st != 200 || strings.Count(body, "x") < within {
		t.Fatalf("an answer within the cap: %d, %d bytes: %.200s", st, len(body), body)
	}

	st, body = r.call(sid, "big", strconv.Itoa(MaxBody+4096))
	if st != 404 || !strings.Contains(body, `"code":-32002`) || !strings.Contains(body, "over the bridge's cap") || !strings.Contains(body, "initialize") {
		t.Fatalf("an answer over the cap: %d %.300s", st, body)
	}
	if n := r.bridge.Sessions(); n != 0 {
		t.Fatalf("%d sessions after their server passed the cap", n)
	}
	// The session is gone: its next request, a ping, is answered so.
	if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); st != 404 || !strings.Contains(body, "initialize") {
		t.Fatalf("a ping of the ended session: %d %s", st, body)
	}
	// Its server is gone, and its place is free: a new session starts.
	first := readPids(t, pids)[0]
	waitFor(t, "the server over the cap to be gone", func() bool { return errors.Is(syscall.Kill(first, 0), syscall.ESRCH) })
	sid2 := r.initSession()
	if st, body := r.call(sid2, "echo", "again"); st != 200 || !strings.Contains(body, "again") {
		t.Fatalf("a call of the next session: %d %s", st, body)
	}
	var ended bool
	for _, e := range r.logged() {
		ended = ended || e.Call == "big" && strings.Contains(e.Outcome, "over the bridge's cap")
	}
	if !ended {
		t.Errorf("the call over the cap was not logged with its reason: %v", r.logged())
	}
}

func readPids(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, n)
	}
	if len(pids) == 0 {
		t.Fatal("no server started")
	}
	return pids
}
