package askbroker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNoWayToAskIsRefusedAtOnce(t *testing.T) {
	s, _ := testStore(t)
	var logged []string
	b, err := New(Config{Store: s, Wait: time.Hour, Log: func(l string) { logged = append(logged, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := b.Ask(ctx, sampleQuestion())
	if !errors.Is(err, ErrNoWay) || d.Allow || !strings.Contains(d.Reason, "lnk agent allow --tool gh") {
		t.Fatalf("with no way to ask: %+v, %v; want ErrNoWay naming the --allow", d, err)
	}
	if ctx.Err() != nil {
		t.Fatal("the refusal waited instead of coming at once")
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "no way to ask") {
		t.Errorf("the refusal is not logged once: %q", logged)
	}
	if ws, _ := s.List(); len(ws) != 0 {
		t.Errorf("a question nobody answers waits in the store: %+v", ws)
	}
}

func TestAskWaitBounds(t *testing.T) {
	if _, err := New(Config{Wait: 25 * time.Hour}); err == nil {
		t.Error("an ask_wait over a day was taken")
	}
	b, err := New(Config{})
	if err != nil || b.cfg.Wait != DefaultWait {
		t.Errorf("default wait = %v, %v; want %v", b.cfg.Wait, err, DefaultWait)
	}
}

// 1,000 questions answered concurrently through the store (a chat holds
// the answering lock), none lost or doubled.
func TestThousandQuestionsThroughTheStore(t *testing.T) {
	t.Parallel()
	s, _ := testStore(t)
	release, err := s.Answering()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	const n = 1000
	b, err := New(Config{Store: s, Wait: 5 * time.Minute, Limits: Limits{Waiting: n, PerMinute: n, PauseAfter: n + 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	decisions := make([]Decision, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := sampleQuestion()
			q.Call = "call " + string(rune('a'+i%26))
			decisions[i], _ = b.Ask(context.Background(), q)
		}()
	}
	// The owner answers each as it appears: yes to even calls' letters.
	answered := map[string]bool{}
	deadline := time.Now().Add(120 * time.Second)
	for len(answered) < n && time.Now().Before(deadline) {
		ws, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if answered[w.ID] {
				continue
			}
			answered[w.ID] = true
			if err := s.Answer(w.ID, Answer{Allow: (w.Call[5]-'a')%2 == 0, By: "store"}); err != nil {
				t.Fatalf("answer %s: %v", w.ID, err)
			}
		}
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, d := range decisions {
		if d.By != "store" || d.Allow != ((i%26)%2 == 0) {
			t.Fatalf("question %d: %+v; want the store's answer", i, d)
		}
		if seen[d.ID] {
			t.Fatalf("question id %s decided twice", d.ID)
		}
		seen[d.ID] = true
	}
}

func TestLimitsAndPause(t *testing.T) {
	lm := newLimiter(Limits{Waiting: 2, PerMinute: 3, PauseAfter: 2, PauseWindow: time.Minute, PauseFor: time.Hour})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if lm.admit("s", t0) != nil || lm.admit("s", t0) != nil {
		t.Fatal("two questions refused")
	}
	if err := lm.admit("s", t0); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third waiting: %v, want ErrTooMany", err)
	}
	if err := lm.admit("other", t0); err != nil {
		t.Fatalf("another sandbox is held by this one's count: %v", err)
	}
	lm.done("s", false, t0)
	if lm.admit("s", t0) != nil {
		t.Fatal("third question refused after one ended")
	}
	lm.done("s", false, t0)
	if err := lm.admit("s", t0); !errors.Is(err, ErrTooFast) {
		t.Fatalf("fourth in a minute: %v, want ErrTooFast", err)
	}
	t1 := t0.Add(2 * time.Minute)
	if until := lm.done("s", true, t1); !until.IsZero() {
		t.Fatal("paused after one refusal")
	}
	until := lm.done("s", true, t1)
	if !until.Equal(t1.Add(time.Hour)) {
		t.Fatalf("two refusals: paused until %v", until)
	}
	if err := lm.admit("s", t1.Add(time.Minute)); !errors.Is(err, ErrPaused) {
		t.Fatalf("paused sandbox: %v, want ErrPaused", err)
	}
	if err := lm.admit("s", t1.Add(time.Hour+time.Second)); err != nil {
		t.Fatalf("after the pause: %v", err)
	}
}

// Refused calls pause a sandbox: its next question is refused at once,
// the log says so once, and other sandboxes still ask.
func TestRefusalsPauseASandbox(t *testing.T) {
	s, _ := testStore(t)
	release, err := s.Answering()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var mu sync.Mutex
	var logged []string
	b, err := New(Config{Store: s, Wait: time.Minute, Limits: Limits{PauseAfter: 3},
		Log: func(l string) { mu.Lock(); logged = append(logged, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.CountRefusal("work")
	b.CountRefusal("work")
	q := sampleQuestion()
	c := askAsync(b, q)
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ws, _ := s.List(); len(ws) == 1 {
			id = ws[0].ID
		}
	}
	if err := s.Answer(id, Answer{Allow: false, By: "store"}); err != nil {
		t.Fatal(err)
	}
	waitResult(t, c)
	d, err := b.Ask(context.Background(), sampleQuestion())
	if !errors.Is(err, ErrPaused) || d.Allow {
		t.Fatalf("after three refusals: %+v, %v; want ErrPaused", d, err)
	}
	other := sampleQuestion()
	other.Sandbox = "other"
	c = askAsync(b, other)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ws, _ := s.List(); len(ws) == 1 {
			s.Answer(ws[0].ID, Answer{Allow: true, By: "store"})
			break
		}
	}
	if r := waitResult(t, c); !r.d.Allow {
		t.Fatalf("another sandbox was paused too: %+v", r.d)
	}
	mu.Lock()
	defer mu.Unlock()
	pauses := 0
	for _, l := range logged {
		if strings.Contains(l, "ask pause") && strings.Contains(l, `"work"`) {
			pauses++
		}
	}
	if pauses != 1 {
		t.Errorf("the pause is logged %d times, want once: %q", pauses, logged)
	}
}
