package webhook

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pidOf is the pid of hook's running lnk-webhook, 0 for none.
func pidOf(l *Listener, hook string) int {
	l.checks.mu.Lock()
	defer l.checks.mu.Unlock()
	if c := l.checks.byHook[slot(hook, 0)]; c != nil && !c.ended() {
		return c.cmd.Process.Pid
	}
	return 0
}

// serve runs l on a fresh port until the test ends, or until
// stopServing(l).
func serve(t testing.TB, l *Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.ServeOn(ctx, ln); close(done) }()
	stop := sync.OnceFunc(func() { cancel(); <-done; l.Close() })
	stoppers.Store(l, stop)
	t.Cleanup(stop)
	return "http://" + ln.Addr().String()
}

// stoppers are serve's stops, by listener.
var stoppers sync.Map

// stopServing stops l and closes it, releasing its agent's record for
// the next listener (one listener per agent holds it).
func stopServing(l *Listener) {
	if stop, ok := stoppers.Load(l); ok {
		stop.(func())()
	}
}

// listen stops the listener r.base reaches and starts another, with
// checker, d, lim and logf, which r.base reaches from then on.
func (r *rig) listen(t testing.TB, checker string, d Deliverer, lim Limits, logf func(string, ...any)) *Listener {
	t.Helper()
	stopServing(r.cur)
	l, err := NewListener(r.a, checker, d, lim, logf)
	if err != nil {
		t.Fatal(err)
	}
	r.cur, r.base = l, serve(t, l)
	return l
}

// TestOneCheckerPerWebhookKept: a webhook's posts are checked by one
// lnk-webhook, started at its first post and kept; another webhook's by
// another (each is handed only its own webhook's secrets); a checker
// that died is replaced at the next post, which is taken.
func TestOneCheckerPerWebhookKept(t *testing.T) {
	r := newRig(t, testLimits())
	l := r.listen(t, r.checker, r.h, testLimits(), nil)
	other, err := r.a.Add("deploy", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Secret.Destroy()
	if pidOf(l, r.hook.ID) != 0 {
		t.Fatal("a checker ran before the first post")
	}
	want(t, "first", r.post(t, "/h/"+r.hook.ID, "m1", time.Now(), "text/plain", []byte("a"), r.secret), 202)
	first := pidOf(l, r.hook.ID)
	want(t, "second", r.post(t, "/h/"+r.hook.ID, "m2", time.Now(), "text/plain", []byte("b"), r.secret), 202)
	if first == 0 || pidOf(l, r.hook.ID) != first {
		t.Fatalf("the webhook's checker was not kept: %d then %d", first, pidOf(l, r.hook.ID))
	}
	want(t, "the other webhook", r.post(t, "/h/"+other.Hook.ID, "m1", time.Now(), "text/plain", []byte("c"), other.Secret), 202)
	if o := pidOf(l, other.Hook.ID); o == 0 || o == first {
		t.Fatalf("the other webhook's posts went to checker %d (the first's: %d)", o, first)
	}
	p, _ := os.FindProcess(first)
	p.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for pidOf(l, r.hook.ID) == first && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	want(t, "after its checker died", r.post(t, "/h/"+r.hook.ID, "m3", time.Now(), "text/plain", []byte("d"), r.secret), 202)
	if n := pidOf(l, r.hook.ID); n == 0 || n == first {
		t.Fatalf("no new checker: %d", n)
	}
}

// TestACheckerNamingAnotherIDIsNotBelieved: a checker (standing for a
// compromised lnk-webhook) that answers 200 for an id the post does not
// carry is refused 503 and the post reaches no one; one naming the
// post's own id is believed (the positive control).
func TestACheckerNamingAnotherIDIsNotBelieved(t *testing.T) {
	r := newRig(t, testLimits())
	script := func(id string) string {
		p := filepath.Join(t.TempDir(), "checker")
		body := "#!/bin/sh\nread -r line\nseq=${line#*\\\"seq\\\":}\nseq=${seq%%,*}\n" +
			"printf '{\"seq\":%s,\"status\":200,\"id\":\"" + id + "\",\"scheme\":\"link\"}\\n' \"$seq\"\nexec sleep 30\n"
		if err := os.WriteFile(p, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		id     string
		status int
	}{{"forged", 503}, {"m1", 202}} {
		var log strings.Builder
		var mu sync.Mutex
		r.listen(t, script(c.id), r.h, testLimits(), func(f string, a ...any) { mu.Lock(); log.WriteString(f); mu.Unlock() })
		want(t, "a checker naming "+c.id, r.post(t, "/h/"+r.hook.ID, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), c.status)
	}
	if n := r.h.count(); n != 1 {
		t.Fatalf("%d posts reached the harness, want the control's alone", n)
	}
}

// TestTakenIDIsOnDiskWhenAnswered: posts taken at once share appends to
// hooks-seen.log, and each is answered 202 only once the record on disk
// holds its id: read back at each 202, it is there, and a listener
// started afresh refuses every replay 401.
func TestTakenIDIsOnDiskWhenAnswered(t *testing.T) {
	r := newRig(t, testLimits())
	const n = 48
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "burst-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
			if got := r.post(t, "/h/"+r.hook.ID, id, time.Now(), "text/plain", []byte("hi"), r.secret); got != 202 {
				errs <- id + ": " + itoa(got)
				return
			}
			if !strings.Contains(onDisk(t, r.a), `"`+r.hook.ID+" "+id+`"`) {
				errs <- id + " answered 202 before " + SeenName + " held it"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	r.listen(t, r.checker, r.h, testLimits(), nil)
	want(t, "a replay after a restart", r.post(t, "/h/"+r.hook.ID, "burst-a0", time.Now(), "text/plain", []byte("hi"), r.secret), 401)
	want(t, "a new post after a restart", r.post(t, "/h/"+r.hook.ID, "after", time.Now(), "text/plain", []byte("hi"), r.secret), 202)
}

func itoa(n int) string { return strconv.Itoa(n) }
