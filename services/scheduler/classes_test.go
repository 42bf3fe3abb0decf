package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/store"
)

// fromJob counts thread's message events from job id's firings.
func (r *agentRunning) fromJob(thread, id string) int {
	n := 0
	for _, e := range r.events(thread) {
		if e.Kind == store.KindMessage && e.From == "schedule:"+id {
			n++
		}
	}
	return n
}

// TestNotAnsweringIsTriedWithBackoff: a job whose firing the real way in
// can't hand (the agent's real harness not started yet) stays due and is
// tried again after 1 minute, then 2, never at each Fire between, said
// in the log once however many tries; once the harness answers it is
// taken (said once), answered once, and fires no more.
func TestNotAnsweringIsTriedWithBackoff(t *testing.T) {
	r := prepare(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	j := job("main", "stand up", 1, now.Add(-time.Second))
	st.Write(j)
	fire := func(wantHands int64) time.Time {
		t.Helper()
		next, err := run.Fire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := r.hands.Load(); n != wantHands {
			t.Fatalf("at +%s: %d tries, want %d\n%s", now.Sub(j.Next).Round(time.Second), n, wantHands, r.logged())
		}
		return next
	}
	if next := fire(1); !next.Equal(now.UTC().Add(firstRetry)) {
		t.Fatalf("the next try at %v, want a minute on", next)
	}
	fire(1) // waiting its minute: not tried
	now = now.Add(time.Minute)
	fire(2)
	now = now.Add(time.Minute)
	fire(2) // now it waits 2 minutes
	now = now.Add(time.Minute)
	fire(3)
	if jobs, _ := st.List(); len(jobs) != 1 {
		t.Fatalf("a job not taken for now was not kept: %+v", jobs)
	}
	log := r.logged()
	if n := strings.Count(log, "job "+j.ID+"'s firing not taken for now"); n != 1 || !strings.Contains(log, "not answering") {
		t.Fatalf("3 tries not taken said %d times:\n%s", n, log)
	}

	r.startHarness()
	now = now.Add(4 * time.Minute)
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		run.Fire(context.Background())
		if r.fromJob("main", j.ID) == 1 || time.Now().After(end) {
			break
		}
		now = now.Add(maxRetry) // the harness still starting: its next try
	}
	r.waitAnswers("main", 1)
	for i := 0; i < 3; i++ {
		now = now.Add(time.Hour)
		run.Fire(context.Background())
	}
	if n := r.fromJob("main", j.ID); n != 1 {
		t.Fatalf("the job's firing reached the agent %d times, want once", n)
	}
	if jobs, _ := st.List(); len(jobs) != 0 {
		t.Fatalf("the one-off job taken was kept: %+v", jobs)
	}
	if n := strings.Count(r.logged(), "job "+j.ID+"'s firing taken, after"); n != 1 {
		t.Fatalf("taken said %d times:\n%s", n, r.logged())
	}
}

// TestBusyHarnessIsTriedWithBackoff: with main in a turn (held by the
// model) and its inbox full of firings the real harness took (each
// answered taken at once, the positive control), the next firing is
// refused 503, refusal.ErrBusy: it stays due, is tried again at its
// time, said once, and once the turn ends is taken and answered once.
func TestBusyHarnessIsTriedWithBackoff(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	cl, err := endpoint.NewClient(config.BridgeFor(r.cfg))
	if err != nil {
		t.Fatal(err)
	}
	owner := make(chan error, 1)
	go func() { _, err := cl.Send(context.Background(), "main", "HOLD this turn", nil); owner <- err }()
	<-r.held
	var jobs []*Job
	for i := 0; i <= store.MaxQueuedMessages; i++ {
		j := job("main", "firing "+itoa(i), 1, now.Add(-time.Second))
		j.Created = now.Add(time.Duration(i) * time.Millisecond).UTC() // fired in this order
		st.Write(j)
		jobs = append(jobs, j)
	}
	last := jobs[len(jobs)-1]
	if _, err := run.Fire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := st.List(); len(left) != 1 || left[0].ID != last.ID {
		t.Fatalf("after the inbox filled, kept %d jobs, want the last alone\n%s", len(left), r.logged())
	}
	now = now.Add(time.Minute)
	run.Fire(context.Background())
	if n := r.hands.Load(); n != int64(len(jobs))+1 {
		t.Fatalf("%d tries, want %d", n, len(jobs)+1)
	}
	log := r.logged()
	if n := strings.Count(log, "job "+last.ID+"'s firing not taken for now"); n != 1 || !strings.Contains(log, "(503)") || !strings.Contains(log, "inbox is full") {
		t.Fatalf("two tries refused for now said %d times:\n%s", n, log)
	}
	close(r.release)
	if err := <-owner; err != nil {
		t.Fatal(err)
	}
	r.waitAnswers("main", 1+store.MaxQueuedMessages)
	now = now.Add(2 * time.Minute)
	run.Fire(context.Background())
	r.waitAnswers("main", 2+store.MaxQueuedMessages)
	now = now.Add(time.Hour)
	run.Fire(context.Background())
	for _, j := range jobs {
		if n := r.fromJob("main", j.ID); n != 1 {
			t.Fatalf("job %s reached the agent %d times, want once", j.ID, n)
		}
	}
	if left, _ := st.List(); len(left) != 0 {
		t.Fatalf("jobs kept after they were taken: %+v", left)
	}
}

// TestRefusedByARuleEndsTheJob: a refusal by a rule ends the job,
// recurring or not, said once: a recurring job past [tool.scheduler]
// hops, refused by the real way in, is removed at its first firing, not
// refused again at each; a job whose firing the real harness refuses
// 403 (handed to its endpoint as the owner's message into a stranger's
// conversation, which the way in's own checks otherwise stop first) is
// removed, not retried. The positive control: a job into main handed
// the same way is taken and answered once.
func TestRefusedByARuleEndsTheJob(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	hop := job("main", "every minute at hop 9", 9, now.Add(-time.Second))
	hop.At, hop.Cron = time.Time{}, "* * * * *"
	st.Write(hop)
	for i := 0; i < 3; i++ {
		run.Fire(context.Background())
		now = now.Add(time.Minute)
	}
	if n := r.hands.Load(); n != 1 {
		t.Fatalf("the recurring job refused by a rule was handed %d times", n)
	}
	if left, _ := st.List(); len(left) != 0 {
		t.Fatalf("kept after a refusal by a rule: %+v", left)
	}
	if log := r.logged(); strings.Count(log, "job "+hop.ID+"'s firing refused, the job removed") != 1 || !strings.Contains(log, "hop 9 is past the agent's cap") {
		t.Fatalf("the log:\n%s", log)
	}

	cl, err := endpoint.NewClient(config.BridgeFor(r.cfg))
	if err != nil {
		t.Fatal(err)
	}
	direct := &Runner{Store: st, Zone: time.Local, Now: func() time.Time { return now }, Logf: r.logf,
		Hand: func(ctx context.Context, m Message) error {
			r.hands.Add(1)
			_, err := cl.SendMessage(ctx, endpoint.Message{Thread: m.Thread, Text: m.Text}, nil, nil)
			return err
		}}
	refused, ok := job("webhook:ci", "into a stranger's", 1, now.Add(-time.Second)), job("main", "the control", 1, now.Add(-time.Second))
	st.Write(refused)
	st.Write(ok)
	before := r.hands.Load()
	for i := 0; i < 3; i++ {
		direct.Fire(context.Background())
		now = now.Add(time.Hour)
	}
	if n := r.hands.Load() - before; n != 2 {
		t.Fatalf("%d firings handed, want 2 (each job once)", n)
	}
	if left, _ := st.List(); len(left) != 0 {
		t.Fatalf("kept: %+v", left)
	}
	log := r.logged()
	if strings.Count(log, "job "+refused.ID+"'s firing refused, the job removed") != 1 || !strings.Contains(log, "(403)") {
		t.Fatalf("the 403 said:\n%s", log)
	}
	if strings.Contains(log, ok.ID) {
		t.Fatalf("the control's firing was refused:\n%s", log)
	}
	evs := r.waitAnswers("main", 1)
	n := 0
	for _, e := range evs {
		if e.Kind == store.KindMessage && e.Text == "the control" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the control reached main %d times", n)
	}
}

// TestBackoffIsBounded: the wait between tries doubles from firstRetry
// and stops at maxRetry; a change of why is said again, the same why
// not.
func TestBackoffIsBounded(t *testing.T) {
	var r Runner
	now := time.Now()
	want := firstRetry
	for i := 0; i < 12; i++ {
		rt, tell := r.notTaken("0123456789abcdef", "busy", now, nil)
		if rt.wait != want || tell != (i == 0) || !rt.at.Equal(now.Add(want)) {
			t.Fatalf("try %d: waits %s (want %s), told %v", i, rt.wait, want, tell)
		}
		want = min(2*want, maxRetry)
	}
	if _, tell := r.notTaken("0123456789abcdef", "not answering", now, nil); !tell {
		t.Fatal("a new why was not said")
	}
	if n := r.settled("0123456789abcdef"); n != 13 {
		t.Fatalf("settled after %d tries", n)
	}
}

// TestUntakenFiringFreesTheLock: a firing its hand never takes (a
// harness that accepted and never answered) is ended at takeWait,
// kept as not taken for now with its wait, and the schedule's lock is
// free again, so the model's cancel and the owner's delete go on; the
// control, a hand that takes at once, ends the one-off job.
func TestUntakenFiringFreesTheLock(t *testing.T) {
	defer func(w time.Duration) { takeWait = w }(takeWait)
	takeWait = 200 * time.Millisecond
	home := t.TempDir()
	st, err := OpenStore(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	var logs strings.Builder
	var mu sync.Mutex
	logf := func(f string, a ...any) { mu.Lock(); defer mu.Unlock(); fmt.Fprintf(&logs, f+"\n", a...) }
	stalled := &Runner{Store: st, Zone: time.Local, Now: func() time.Time { return now }, Logf: logf,
		Hand: func(ctx context.Context, m Message) error {
			<-ctx.Done() // never taken
			return fmt.Errorf("the agent's harness did not take the message: %w", context.Cause(ctx))
		}}
	j := job("main", "never taken", 1, now.Add(-time.Second))
	if err := st.Write(j); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { stalled.Fire(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a firing never taken held the runner past takeWait")
	}
	unlock, err := st.Lock() // free: the delete's and cancel's lock
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	left, err := st.List()
	if err != nil || len(left) != 1 || left[0].Retry == nil {
		t.Fatalf("the job not taken should be kept with its wait: %+v %v", left, err)
	}
	if !strings.Contains(logs.String(), "not taken for now") {
		t.Fatalf("the log:\n%s", logs.String())
	}

	taken := &Runner{Store: st, Zone: time.Local, Now: func() time.Time { return now.Add(2 * time.Hour) }, Logf: logf,
		Hand: func(ctx context.Context, m Message) error { return nil }}
	taken.Fire(context.Background())
	if left, _ := st.List(); len(left) != 0 {
		t.Fatalf("the control's one-off job was kept: %+v", left)
	}
}
