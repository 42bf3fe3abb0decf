package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestJobRemovedWhileFiringStaysGone: with a real Link Harness behind
// the real way in, a recurring job into work-1 is removed (RemoveInto,
// as lnk agent chats delete does, under the schedule's lock) while its
// firing is under way: the remover waits for the firing, and the job is
// not written back with its next time after, so it never fires again
// (before the lock, the runner's write after the firing put it back).
// A job into another conversation is kept (the control), as is the
// firing itself, answered in work-1.
func TestJobRemovedWhileFiringStaysGone(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	for _, c := range []string{"work-1", "work-2"} {
		if err := os.Mkdir(filepath.Join(r.chats, c), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	every := job("work-1", "every minute", 1, now.Add(-time.Second))
	every.At, every.Cron = time.Time{}, "* * * * *"
	other := job("work-2", "later", 1, now.Add(time.Hour))
	st.Write(every)
	st.Write(other)

	removed := make(chan []string, 1)
	hand := run.Hand
	run.Hand = func(ctx context.Context, m Message) error {
		go func() {
			s2, err := OpenStore(r.home, "ada")
			if err != nil {
				t.Error(err)
				removed <- nil
				return
			}
			defer s2.Close()
			unlock, err := s2.Lock()
			if err != nil {
				t.Error(err)
				removed <- nil
				return
			}
			defer unlock()
			ids, err := s2.RemoveInto("work-1")
			if err != nil {
				t.Error(err)
			}
			removed <- ids
		}()
		err := hand(ctx, m)
		// Give a remover that doesn't wait for the lock its time to
		// remove the job before the runner writes it back.
		time.Sleep(300 * time.Millisecond)
		return err
	}
	if _, err := run.Fire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ids := <-removed; !slices.Equal(ids, []string{every.ID}) {
		t.Fatalf("removed %v, want [%s]", ids, every.ID)
	}
	r.waitAnswers("work-1", 1)
	jobs, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != other.ID {
		t.Fatalf("jobs kept: %+v, want only %s (into work-2)", jobs, other.ID)
	}
	if _, err := os.Lstat(filepath.Join(r.home, "Link", "Agents", "ada", "Agent", "schedule", every.ID+".json")); !os.IsNotExist(err) {
		t.Fatalf("the removed job's file is back: %v", err)
	}
}
