package agentlife

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/scheduler"
)

// events is the agent's conversation thread as Link Harness keeps it.
func (w *world) events(thread string) []store.Event {
	b, _ := os.ReadFile(filepath.Join(w.home, "Link", "Agents", w.agent, "Agent", "chats", thread, "events.jsonl"))
	var out []store.Event
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e store.Event
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// answeredFrom says how many messages from from the thread holds, and
// whether an answer follows the last.
func (w *world) answeredFrom(thread, from string) (n int, answered bool) {
	for _, e := range w.events(thread) {
		switch {
		case e.Kind == store.KindMessage && e.From == from:
			n, answered = n+1, false
		case e.Kind == store.KindAnswer && n > 0:
			answered = true
		}
	}
	return n, answered
}

var startedBg = regexp.MustCompile(`background command ([0-9a-f]{16})`)

// TestMessagesFromOthersEndToEnd: lnk agent start opens the agent's way
// in (0600, a fresh key) beside Link Harness in its sandbox with the
// built-in model. The agent schedules a job with its scheduler ("remind
// me in 30 minutes"), which, once due, fires through the way in and the
// agent answers it in the job's own conversation; a job at hop 9 is
// refused and logged; a background command the agent started has its
// ending arrive once, from run:<id>. lnk agent stop removes the way in's
// socket and key.
func TestMessagesFromOthersEndToEnd(t *testing.T) {
	w := linkWorld(t, "pinger")
	w.mustLnk("agent", "start", w.agent)
	settings := filepath.Join(w.home, ".lnk", "agents", w.agent)
	for _, n := range []string{"wayin.sock", "wayin.key"} {
		st, err := os.Stat(filepath.Join(settings, n))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want 0600", n, st, err)
		}
	}
	if out := w.send("hello"); !strings.Contains(out, "hello") {
		t.Fatalf("the owner's message: %s", out)
	}
	st, err := scheduler.OpenStore(w.home, w.agent)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The agent schedules through its own scheduler (the built-in's
	// "remind me" rule, the kernel's tool bridge, lnk-scheduler-tool);
	// the test, as the clock, brings the job's time forward.
	out := w.send("remind me in 30 minutes to stand up and stretch")
	sm := regexp.MustCompile(`scheduled job ([0-9a-f]{16})`).FindStringSubmatch(out)
	if sm == nil {
		t.Fatalf("remind me answered:\n%s", out)
	}
	jobs, err := st.List()
	if err != nil || len(jobs) != 1 || jobs[0].ID != sm[1] || jobs[0].Thread != "main" || jobs[0].Hops != 1 || jobs[0].Text != "stand up and stretch" {
		t.Fatalf("the job written: %+v %v", jobs, err)
	}
	due := jobs[0]
	now := time.Now().UTC()
	due.At, due.Next = now.Add(-time.Second), now.Add(-time.Second)
	deep := &scheduler.Job{ID: "00000000000000a9", Thread: "main", Hops: 9, Text: "one hop too many", At: now.Add(-time.Second), Next: now.Add(-time.Second), Created: now}
	for _, j := range []*scheduler.Job{due, deep} {
		if err := st.Write(j); err != nil {
			t.Fatal(err)
		}
	}
	w.waitFor("the job's firing answered", func() bool { n, ok := w.answeredFrom("main", "schedule:"+due.ID); return n == 1 && ok })
	w.waitFor("hop 9 refused", func() bool {
		return strings.Contains(w.log(), "hop 9 is past the agent's cap ([tool.scheduler] hops = 8)")
	})
	if n, _ := w.answeredFrom("main", "schedule:"+deep.ID); n != 0 {
		t.Fatal("hop 9 reached the agent")
	}
	if jobs, err := st.List(); err != nil || len(jobs) != 0 {
		t.Fatalf("the jobs left: %+v %v", jobs, err)
	}
	out = w.send("start ls work")
	m := startedBg.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("start ls work answered:\n%s", out)
	}
	w.waitFor("the ending answered", func() bool { n, ok := w.answeredFrom("main", "run:"+m[1]); return n == 1 && ok })
	time.Sleep(time.Second)
	if n, _ := w.answeredFrom("main", "run:"+m[1]); n != 1 {
		t.Fatalf("the ending arrived %d times", n)
	}
	w.mustLnk("agent", "stop", w.agent)
	for _, n := range []string{"wayin.sock", "wayin.key"} {
		if _, err := os.Lstat(filepath.Join(settings, n)); !os.IsNotExist(err) {
			t.Errorf("%s after the stop: %v", n, err)
		}
	}
}
