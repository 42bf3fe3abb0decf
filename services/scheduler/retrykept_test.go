package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRetryWaitSurvivesARestart: a firing the real way in can't hand
// (the agent's real harness not started) keeps its wait with the job,
// read back from its file; a runner started since (the agent's restart)
// waits it out instead of trying at once, then doubles on from it. A
// kept time more than maxRetry away (a clock set back, a file edited) is
// not waited for.
func TestRetryWaitSurvivesARestart(t *testing.T) {
	r := prepare(t, "")
	now := time.Now().UTC().Truncate(time.Second)
	run, st := r.runner(func() time.Time { return now })
	j := job("main", "stand up", 1, now.Add(-time.Second))
	st.Write(j)
	fire := func(run *Runner, wantHands int64) {
		t.Helper()
		if _, err := run.Fire(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := r.hands.Load(); n != wantHands {
			t.Fatalf("%d tries, want %d\n%s", n, wantHands, r.logged())
		}
	}
	kept := func() *Retry {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(r.home, "Link", "Agents", "ada", "Agent", "schedule", j.ID+".json"))
		if err != nil {
			t.Fatal(err)
		}
		k, err := ParseJob(b)
		if err != nil {
			t.Fatal(err)
		}
		return k.Retry
	}
	fire(run, 1)
	if k := kept(); k == nil || !k.At.Equal(now.Add(firstRetry)) || k.Wait != 60 || k.Tries != 1 {
		t.Fatalf("the job keeps %+v, want a try at +1m after a wait of 60 s", k)
	}
	// The agent restarted: a runner of its own, knowing nothing.
	again, _ := r.runner(func() time.Time { return now })
	fire(again, 1) // its minute not past: not tried
	now = now.Add(time.Minute)
	fire(again, 2)
	if k := kept(); k == nil || !k.At.Equal(now.Add(2*time.Minute)) || k.Wait != 120 || k.Tries != 2 {
		t.Fatalf("the job keeps %+v, want a try 2 minutes on, the wait doubled", k)
	}
	// A kept time too far away is not waited for.
	far, _ := st.List()
	far[0].Retry.At = now.Add(24 * time.Hour)
	if err := st.Write(far[0]); err != nil {
		t.Fatal(err)
	}
	third, _ := r.runner(func() time.Time { return now })
	fire(third, 3)
}

// TestParseJobRetry: a job's kept retry is read back as written, and one
// with no time, no tries, or a wait outside firstRetry..maxRetry is
// refused (as its seeds in testdata/fuzz/FuzzParseJob are replayed).
func TestParseJobRetry(t *testing.T) {
	base := `{"id":"0123456789abcdef","thread":"main","hops":1,"text":"x","at":"2026-12-07T10:00:00Z","next":"2026-12-07T10:00:00Z","created":"2026-12-07T09:00:00Z","retry":`
	if j, err := ParseJob([]byte(base + `{"at":"2026-12-07T10:02:00Z","wait_seconds":120,"tries":2}}`)); err != nil || j.Retry == nil || j.Retry.Wait != 120 || j.Retry.Tries != 2 {
		t.Fatalf("a kept retry: %+v %v", j, err)
	}
	for _, bad := range []string{
		`{"at":"2026-12-07T10:02:00Z","wait_seconds":7200,"tries":2}}`,
		`{"at":"2026-12-07T10:02:00Z","wait_seconds":30,"tries":2}}`,
		`{"at":"2026-12-07T10:02:00Z","wait_seconds":120,"tries":0}}`,
		`{"wait_seconds":120,"tries":1}}`,
		`{"at":"2026-12-07T10:02:00Z","wait_seconds":120,"tries":1,"why":"x"}}`,
	} {
		if _, err := ParseJob([]byte(base + bad)); err == nil {
			t.Errorf("retry %s taken", bad)
		}
	}
}
