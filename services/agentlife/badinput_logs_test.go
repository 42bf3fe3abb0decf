package agentlife

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBadPromptFilesSaidInAgentLogs: prompt files Link Harness leaves
// out (a fifo, a link) or cuts (past 64 KiB) are each said in `lnk agent
// logs`, read end to end through the supervisor's log, and the turn is
// answered all the same (the positive control: its run call works).
func TestBadPromptFilesSaidInAgentLogs(t *testing.T) {
	w := linkWorld(t, "careful")
	agent := filepath.Join(w.home, "Link", "Agents", "careful", "Agent")
	if err := syscall.Mkfifo(filepath.Join(agent, "instructions", "instruction.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.home, "elsewhere.md"), []byte("not the agent's\n"), 0o600)
	if err := os.Symlink(filepath.Join(w.home, "elsewhere.md"), filepath.Join(agent, "memory", "notes.md")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(agent, "skills", "big"), 0o700)
	os.WriteFile(filepath.Join(agent, "skills", "big", "SKILL.md"), []byte(strings.Repeat("a line of a skill\n", 5000)), 0o600)
	os.WriteFile(filepath.Join(w.home, "Link", "Agents", "careful", "Home", "work", "seen.txt"), []byte("x\n"), 0o600)
	w.mustLnk("agent", "start", w.agent)
	t.Cleanup(func() { w.lnkCmd("agent", "stop", w.agent) })
	if out := w.send("run ls work"); !strings.Contains(out, "seen.txt") {
		t.Fatalf("the turn beside the bad files:\n%s", out)
	}
	_, logs, _ := w.lnkCmd("agent", "logs", w.agent)
	for _, want := range []string{"instruction.md left out", "notes.md left out", `skill "big": only the first`} {
		if !strings.Contains(logs, want) {
			t.Errorf("lnk agent logs lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "not the agent's") {
		t.Errorf("the linked notes' words reached the log:\n%s", logs)
	}
}
