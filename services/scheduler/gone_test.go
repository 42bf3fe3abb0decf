package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJobIntoDeletedConversationRemoved: with a real Link Harness behind
// the real way in, a job into the owner's conversation fires and is
// answered while the conversation is kept (the positive control); once
// the owner deleted it, a recurring job and a one-off one into it are
// refused by the harness at firing, never start it again, and are
// removed, each refusal logged once by the runner with its reason and a
// hint naming the command that starts the conversation; firing again
// logs nothing more.
func TestJobIntoDeletedConversationRemoved(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	if err := os.Mkdir(filepath.Join(r.chats, "work-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	st.Write(job("work-1", "kept", 1, now.Add(-time.Second)))
	if _, err := run.Fire(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.waitAnswers("work-1", 1)

	if err := os.RemoveAll(filepath.Join(r.chats, "work-1")); err != nil {
		t.Fatal(err)
	}
	every := job("work-1", "every minute", 1, now.Add(-time.Second))
	every.At, every.Cron = time.Time{}, "* * * * *"
	once := job("work-1", "once", 1, now.Add(-time.Second))
	st.Write(every)
	st.Write(once)
	for i := 0; i < 2; i++ {
		if _, err := run.Fire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(filepath.Join(r.chats, "work-1")); !os.IsNotExist(err) {
		t.Fatalf("a firing started the deleted conversation again: %v", err)
	}
	if jobs, _ := st.List(); len(jobs) != 0 {
		t.Fatalf("jobs left: %+v", jobs)
	}
	log := r.logged()
	for _, id := range []string{every.ID, once.ID} {
		if n := strings.Count(log, "job "+id+"'s firing refused, the job removed"); n != 1 {
			t.Errorf("job %s's refusal logged %d times:\n%s", id, n, log)
		}
	}
	if !strings.Contains(log, "conversation work-1 doesn't exist") || !strings.Contains(log, "hint: lnk agent send ada --new --thread work-1 MESSAGE") {
		t.Fatalf("the log says no reason or hint:\n%s", log)
	}
}
