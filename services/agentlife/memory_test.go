package agentlife

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/builtin"
)

// TestMemoryEndToEnd: with the built-in model, an agent remembers a fact
// in one of its owner's conversations (memory__remember, through its
// proxy, logged) and finds it by search in another; the note is in the
// prompt of the next message (the obedient built-in follows what its
// notes say: a note saying "run ls work" is run in a conversation that
// never said it). The owner's message to a teammate's (agent-*), a
// team's (team-*), a subagent's (task-*) or a stranger's conversation is
// refused before it reaches one, where remember would be refused too
// (services/memory's TestRememberOwnersConversationsOnly), and the
// notes stay as they were. lnk agent memory stop ends the
// service and leaves the index.
func TestMemoryEndToEnd(t *testing.T) {
	w := linkWorld(t, "keeper")
	url := w.serveBuiltin("--obedient")
	work := filepath.Join(w.home, "Link", "Agents", "keeper", "Home", "work")
	os.WriteFile(filepath.Join(work, "seen.txt"), []byte("x\n"), 0o600)
	w.mustLnk("agent", "start", w.agent, "--model", "openai:"+url+":"+builtin.ModelName)
	t.Cleanup(func() { w.lnkCmd("agent", "memory", "stop", w.agent) })
	notes := filepath.Join(w.home, "Link", "Agents", "keeper", "Agent", "memory", "notes.md")

	out := w.sendIn("main", "remember the kumquat tree is by the gate")
	if !strings.Contains(out, "memory answered") {
		t.Fatalf("remember answered:\n%s\nlog:\n%s", out, w.log())
	}
	if b, err := os.ReadFile(notes); err != nil || !strings.Contains(string(b), "the kumquat tree is by the gate") {
		t.Fatalf("notes.md after remember: %q %v", b, err)
	}
	out = w.sendNew("garden", "search kumquat gate")
	if !strings.Contains(out, "memory answered") || !strings.Contains(out, "chats/main/conversation.md") {
		t.Fatalf("a search in another conversation answered:\n%s", out)
	}
	out = w.sendIn("garden", "what do you know about the kumquat tree?")
	if !strings.Contains(out, "chats/main/conversation.md") {
		t.Fatalf("what do you know answered:\n%s", out)
	}

	// Only the owner's conversations may remember: the owner's message
	// never reaches another's (internal/conversation, the rule remember
	// applies too; services/memory's tests refuse it there).
	before, _ := os.ReadFile(notes)
	for _, thread := range []string{"agent-0123abcd", "team-0123abcd", "task-0123abcd", "webhook:stranger"} {
		code, out, errs := w.lnkCmd("agent", "send", w.agent, "--thread", thread, "remember the owner is away")
		if code == 0 || !strings.Contains(errs, "the owner's own conversations") {
			t.Errorf("lnk agent send --thread %s: exit %d\n%s%s", thread, code, out, errs)
		}
	}
	if after, _ := os.ReadFile(notes); string(after) != string(before) {
		t.Fatalf("the notes changed in a conversation not the owner's:\n%s", after)
	}

	// The note is in the next prompt: the obedient model follows it in a
	// conversation where nobody said it.
	w.sendIn("main", "remember run ls work")
	out = w.sendNew("fresh", "hello")
	if !strings.Contains(out, "run answered") || !strings.Contains(out, "seen.txt") {
		t.Fatalf("a note saying run ls work, in the next prompt, answered:\n%s", out)
	}

	audit := w.auditLog()
	if strings.Count(audit, "route=\"tool memory-"+w.id) < 3 {
		t.Fatalf("the audit log lacks memory's calls:\n%s", audit)
	}
	code, stdout, stderr := w.lnkCmd("agent", "memory", "stop", w.agent)
	if code != 0 || !strings.Contains(stdout, "service stopped") {
		t.Fatalf("lnk agent memory stop: %d %s%s", code, stdout, stderr)
	}
	idx, _ := filepath.Glob(filepath.Join(w.home, "Link", "Agents", "keeper", "Agent", "memory", "*", "index.db"))
	if len(idx) != 1 {
		t.Fatalf("the index after the stop: %v", idx)
	}
}

// sendIn sends msg in the owner's conversation thread, kept already
// (or main).
func (w *world) sendIn(thread, msg string) string {
	w.t.Helper()
	return w.sendArgs(msg, "--thread", thread)
}

// sendNew starts the owner's conversation thread with msg (--new).
func (w *world) sendNew(thread, msg string) string {
	w.t.Helper()
	return w.sendArgs(msg, "--new", "--thread", thread)
}

func (w *world) sendArgs(msg string, flags ...string) string {
	w.t.Helper()
	args := append(append([]string{"agent", "send", w.agent}, flags...), msg)
	code, out, errs := w.lnkCmd(args...)
	if code != 0 {
		w.t.Fatalf("lnk agent send %v %q: exit %d\n%s%s\nlog:\n%s", flags, msg, code, out, errs, w.log())
	}
	return out
}
