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

// serve runs l on a fresh port until the test ends.
func serve(t testing.TB, l *Listener) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.ServeOn(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done; l.Close() })
	return "http://" + ln.Addr().String()
}

// TestOneCheckerPerWebhookKept: a webhook's posts are checked by one
// lnk-webhook, started at its first post and kept; another webhook's by
// another (each is handed only its own webhook's secrets); a checker
// that died is replaced at the next post, which is taken.
func TestOneCheckerPerWebhookKept(t *testing.T) {
	r := newRig(t, testLimits())
	l, err := NewListener(r.a, r.checker, r.h, testLimits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.base = serve(t, l)
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
		l, err := NewListener(r.a, script(c.id), r.h, testLimits(), func(f string, a ...any) { mu.Lock(); log.WriteString(f); mu.Unlock() })
		if err != nil {
			t.Fatal(err)
		}
		r.base = serve(t, l)
		want(t, "a checker naming "+c.id, r.post(t, "/h/"+r.hook.ID, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), c.status)
	}
	if n := r.h.count(); n != 1 {
		t.Fatalf("%d posts reached the harness, want the control's alone", n)
	}
}

// TestTakenIDIsOnDiskWhenAnswered: posts taken at once share writes of
// hooks-seen.json, and each is answered 202 only once the record on disk
// holds its id: read back at each 202, it is there, and a listener
// started afresh refuses every replay 401.
func TestTakenIDIsOnDiskWhenAnswered(t *testing.T) {
	r := newRig(t, testLimits())
	seenPath := filepath.Join(r.a.Home, ".lnk", "agents", r.a.ID, SeenName)
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
			b, err := os.ReadFile(seenPath)
			if err != nil || !strings.Contains(string(b), `"`+r.hook.ID+" "+id+`"`) {
				errs <- id + " answered 202 before " + SeenName + " held it"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	again, err := NewListener(r.a, r.checker, r.h, testLimits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.base = serve(t, again)
	want(t, "a replay after a restart", r.post(t, "/h/"+r.hook.ID, "burst-a0", time.Now(), "text/plain", []byte("hi"), r.secret), 401)
	want(t, "a new post after a restart", r.post(t, "/h/"+r.hook.ID, "after", time.Now(), "text/plain", []byte("hi"), r.secret), 202)
}

// TestSeenNotWrittenIsNot202: a taken post whose id can't be written (a
// link put at hooks-seen.json, which is never written through) is not
// answered 202, and its repeat is still refused 401.
func TestSeenNotWrittenIsNot202(t *testing.T) {
	r := newRig(t, testLimits())
	want(t, "the positive control", r.post(t, "/h/"+r.hook.ID, "m0", time.Now(), "text/plain", []byte("hi"), r.secret), 202)
	seenPath := filepath.Join(r.a.Home, ".lnk", "agents", r.a.ID, SeenName)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(elsewhere, []byte("{}"), 0o600)
	if err := os.Remove(seenPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, seenPath); err != nil {
		t.Fatal(err)
	}
	want(t, "taken, not written", r.post(t, "/h/"+r.hook.ID, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), 500)
	want(t, "its repeat", r.post(t, "/h/"+r.hook.ID, "m1", time.Now(), "text/plain", []byte("hi"), r.secret), 401)
	if b, _ := os.ReadFile(elsewhere); string(b) != "{}" {
		t.Fatalf("written through the link: %s", b)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSeenKeeps30Days: a taken post's id is refused for 30 days and then
// forgotten, in memory and in the record written whole.
func TestSeenKeeps30Days(t *testing.T) {
	a := testAgent(t)
	dir, err := a.dir()
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	s, err := openSeen(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old, recent := now.Add(-KeepSeen-time.Minute), now.Add(-KeepSeen+time.Hour)
	for key, at := range map[string]time.Time{"h old": old, "h recent": recent} {
		if err := s.begin(key, at); err != nil {
			t.Fatal(err)
		}
		if err := s.take(key, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.begin("h recent", now); err != ErrRepeat {
		t.Fatalf("an id taken 29 days ago: %v, want a repeat", err)
	}
	if err := s.begin("h old", now); err != nil {
		t.Fatalf("an id taken 30 days ago: %v, want it taken again", err)
	}
	s.drop("h old")
	if err := s.begin("h new", now); err != nil {
		t.Fatal(err)
	}
	if err := s.take("h new", now); err != nil { // a write: the old id pruned
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(a.Home, ".lnk", "agents", a.ID, SeenName))
	if strings.Contains(string(b), "h old") || !strings.Contains(string(b), "h recent") || !strings.Contains(string(b), "h new") {
		t.Fatalf("%s after 30 days:\n%s", SeenName, b)
	}
	again, err := openSeen(dir)
	if err != nil || again.begin("h recent", now) != ErrRepeat || again.begin("h old", now) != nil {
		t.Fatalf("read back: %v", err)
	}
}
