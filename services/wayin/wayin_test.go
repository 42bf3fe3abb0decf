package wayin

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/services/harness/store"
)

// TestScheduleAnsweredInItsConversation: a schedule's message handed at
// the socket reaches the real harness as from schedule:<id>, with its
// hops, and the agent answers it in that conversation; the model read
// it quoted, named as the schedule's.
func TestScheduleAnsweredInItsConversation(t *testing.T) {
	w := newWorld(t, defaults, false)
	again, err := w.send(Message{From: "schedule:j1", Thread: "main", Text: "water the plants\nsecond line", Hops: 3})
	if err != nil || again {
		t.Fatalf("not taken: %v (again %v)", err, again)
	}
	evs := w.waitAnswered("main", 1)
	var msg, ans *store.Event
	for i := range evs {
		switch evs[i].Kind {
		case store.KindMessage:
			msg = &evs[i]
		case store.KindAnswer:
			ans = &evs[i]
		}
	}
	if msg == nil || msg.From != "schedule:j1" || msg.Hops != 3 || msg.Text != "water the plants\nsecond line" {
		t.Fatalf("the harness kept %+v", msg)
	}
	if ans == nil || !strings.Contains(ans.Text, "A message from schedule:j1, not from the owner") {
		t.Errorf("the answer doesn't show the model was told who spoke: %+v", ans)
	}
}

// TestHopPastCapRefused: with [tool.scheduler] hops = 8, a message at hop
// 9 is refused and never reaches the harness; hop 8 is taken.
func TestHopPastCapRefused(t *testing.T) {
	w := newWorld(t, defaults, false)
	_, err := w.send(Message{From: "schedule:deep", Thread: "main", Text: "again", Hops: 9})
	if err == nil || !strings.Contains(err.Error(), "hop 9 is past the agent's cap ([tool.scheduler] hops = 8)") {
		t.Fatalf("hop 9: %v", err)
	}
	if !strings.Contains(w.log.String(), "hop 9 is past") {
		t.Errorf("the refusal was not logged: %s", w.log.String())
	}
	if _, err := w.send(Message{From: "schedule:deep", Thread: "main", Text: "again", Hops: 8}); err != nil {
		t.Fatalf("hop 8 refused: %v", err)
	}
	w.waitAnswered("main", 1)
	if n := w.messagesFrom("main", "schedule:deep"); n != 1 {
		t.Errorf("the harness took %d messages, want 1 (hop 8's alone)", n)
	}
}

// TestPerDay: with [tool.scheduler] per_day = 3, three messages from the
// agent's schedules and subagents are taken a day and the fourth is
// refused; the count is kept in wayin-day.json; a background command's
// ending (bounded by background_per_day at its start) still is taken.
func TestPerDay(t *testing.T) {
	w := newWorld(t, caps.SchedulerLimits{Hops: 8, PerDay: 3, Subagents: 4}, false)
	for i := 0; i < 3; i++ {
		if _, err := w.send(Message{From: "schedule:j" + itoa(i), Thread: "main", Text: "tick", Hops: 1}); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		w.waitAnswered("main", i+1)
	}
	_, err := w.send(Message{From: "schedule:j9", Thread: "main", Text: "tick", Hops: 1})
	if err == nil || !strings.Contains(err.Error(), "3 messages from the agent's schedules and subagents taken today (UTC), the most a day ([tool.scheduler] per_day = 3)") {
		t.Fatalf("the fourth: %v", err)
	}
	d, err := DayFile.Today(int(w.dir.Fd()), time.Now())
	if err != nil || d.N != 3 {
		t.Fatalf("%s: %+v, %v", DayFile.Name, d, err)
	}
	if _, err := w.send(Message{From: "run:00000000000000aa", Thread: "main", Text: "ended", Hops: 1}); err != nil {
		t.Fatalf("a background command's ending: %v", err)
	}
	// A new day starts the count again.
	w.srv.c.Now = func() time.Time { return time.Now().Add(24 * time.Hour) }
	if _, err := w.send(Message{From: "schedule:j10", Thread: "main", Text: "tick", Hops: 1}); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}

// TestSubagentsAtOnce: with [tool.scheduler] subagents = 2, a third
// subagent's message while two turns run is refused; once they end, one
// is taken again. Each goes only to its own conversation.
func TestSubagentsAtOnce(t *testing.T) {
	w := newWorld(t, caps.SchedulerLimits{Hops: 8, PerDay: 100, Subagents: 2}, true)
	for _, id := range []string{"task-a", "task-b"} {
		if _, err := w.send(Message{From: id, Thread: id, Text: "look into it", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	_, err := w.send(Message{From: "task-c", Thread: "task-c", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}})
	if err == nil || !strings.Contains(err.Error(), "2 subagents are running, the most at once ([tool.scheduler] subagents = 2)") {
		t.Fatalf("the third: %v", err)
	}
	if _, err := w.send(Message{From: "task-c", Thread: "main", Text: "look", Hops: 1}); err == nil || !strings.Contains(err.Error(), "only to its own conversation") {
		t.Fatalf("a subagent in another's conversation: %v", err)
	}
	w.open()
	w.waitAnswered("task-a", 1)
	w.waitAnswered("task-b", 1)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err = w.send(Message{From: "task-c", Thread: "task-c", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}})
		if err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatalf("after the two ended: %v", err)
	}
}

// TestSendersRefused: a Link-From naming no sender, one the way in
// doesn't hand (a teammate's, a stranger other than a webhook), and a
// stranger's message for another conversation are refused; a webhook's
// for its own is taken, kept as the stranger's.
func TestSendersRefused(t *testing.T) {
	w := newWorld(t, defaults, false)
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{From: "", Thread: "main", Text: "x"}, "names no sender"},
		{Message{From: "me", Thread: "main", Text: "x"}, "names no sender"},
		{Message{From: "schedule:", Thread: "main", Text: "x"}, "names no sender"},
		{Message{From: "agent-bob", Thread: "main", Text: "x"}, "not from \"agent-bob\""},
		{Message{From: "stranger:telegram:eve", Thread: "main", Text: "x"}, "not from"},
		{Message{From: "stranger:webhook:gh", Thread: "main", Text: "x"}, "only to its own conversation (webhook:gh)"},
		{Message{From: "schedule:j", Thread: "webhook:gh", Text: "x"}, "never goes to a stranger's conversation"},
		{Message{From: "schedule:j", Thread: "../main", Text: "x"}, "conversation"},
		{Message{From: "schedule:j", Thread: "main", Text: ""}, "empty"},
	} {
		if _, err := w.send(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.m, err, c.want)
		}
	}
	if _, err := w.send(Message{From: "stranger:webhook:gh", Thread: "webhook:gh", Text: "a post"}); err != nil {
		t.Fatalf("a webhook's post: %v", err)
	}
	w.waitAnswered("webhook:gh", 1)
	if w.messagesFrom("webhook:gh", "stranger:webhook:gh") != 1 || w.events("main") != nil {
		t.Errorf("the post wasn't kept once in its own conversation alone")
	}
}

// TestProofRequired: a call not proved with the agent's way-in key, or
// naming another agent, is refused and nothing reaches the harness; the
// same call with the key is taken.
func TestProofRequired(t *testing.T) {
	w := newWorld(t, defaults, false)
	m := Message{From: "schedule:p", Thread: "main", Text: "proved?", Hops: 1}
	bad := *w.caller
	bad.Key = make([]byte, 32)
	if _, err := bad.Send(context.Background(), m); err == nil || !strings.Contains(err.Error(), "not proved with the agent's way-in key") {
		t.Fatalf("a wrong key: %v", err)
	}
	other := *w.caller
	other.AgentID = strings.Repeat("f", 32)
	if _, err := other.Send(context.Background(), m); err == nil || !strings.Contains(err.Error(), "another agent") {
		t.Fatalf("another agent: %v", err)
	}
	// A line that answers no challenge at all.
	c, err := net.Dial("unix", w.caller.Socket)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	r.ReadString('\n')
	c.Write([]byte(`{"agent_id":"` + testID + `","answer":"` + hex.EncodeToString(make([]byte, 32)) + `","from":"schedule:p","thread":"main","text":"x","hops":0}` + "\n"))
	line, _ := r.ReadString('\n')
	c.Close()
	if !strings.Contains(line, "not proved") {
		t.Fatalf("a zero answer: %s", line)
	}
	if w.events("main") != nil {
		t.Fatal("a refused call reached the harness")
	}
	if _, err := w.send(m); err != nil {
		t.Fatalf("the proved call: %v", err)
	}
	w.waitAnswered("main", 1)
}

// TestAtMost64AtOnce: 64 messages being handed (a harness that never
// answers its proof holds them) fill the way in; the 65th is refused at
// once, and once they're let go a message is taken again.
func TestAtMost64AtOnce(t *testing.T) {
	w := newWorld(t, defaults, false)
	// A harness port that takes connections and never answers.
	stall, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := stall.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	real := *w.cfg
	stalled := real
	stalled.Port = stall.Addr().(*net.TCPAddr).Port
	writeBridge(t, w, &stalled)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < MaxAtOnce; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.caller.Send(ctx, Message{From: "run:" + sprintf("%016x", i), Thread: "main", Text: "ended"})
		}()
	}
	for end := time.Now().Add(10 * time.Second); len(w.srv.slots) < MaxAtOnce; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("only %d messages in hand", len(w.srv.slots))
		}
	}
	_, err = w.send(Message{From: "run:00000000000000ff", Thread: "main", Text: "ended"})
	if err == nil || !strings.Contains(err.Error(), "handing 64 messages already") || !errors.Is(err, refusal.ErrBusy) {
		t.Fatalf("the 65th, refused for now (refusal.ErrBusy, carried by the reply's rule): %v", err)
	}
	cancel()
	stall.Close()
	mu.Lock()
	for _, c := range held {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
	writeBridge(t, w, &real)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err = w.send(Message{From: "run:00000000000000ff", Thread: "main", Text: "ended"})
		if err == nil || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatalf("after the 64 went: %v", err)
	}
}
