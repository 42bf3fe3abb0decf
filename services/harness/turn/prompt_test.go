package turn

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/prompt"
)

// TestTurnPromptFromAgentFolder: each turn's system prompt is the head,
// then the Agent/ folder's instructions, headed as the owner's, and
// notes, read anew at each message; a prompt file that is a link is left
// out and the turn goes on.
func TestTurnPromptFromAgentFolder(t *testing.T) {
	fx := newFixture(t)
	os.MkdirAll(filepath.Join(fx.dir, "instructions"), 0o700)
	os.MkdirAll(filepath.Join(fx.dir, "memory"), 0o700)
	os.WriteFile(filepath.Join(fx.dir, prompt.InstructionsFile), []byte("Answer in French."), 0o600)
	os.WriteFile(filepath.Join(fx.dir, prompt.NotesFile), []byte("The owner likes tea."), 0o600)
	f, err := os.Open(fx.dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := prompt.Open(f, prompt.Options{Logf: fx.log.logf})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, wire := builtinModel(t, builtin.Options{})
	r := fx.runner(t, Config{Model: m, ModelName: builtin.ModelName, Prompt: src})
	ctx := context.Background()
	if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	sys := contentText(wire.all()[0].Messages[0].Content)
	if !strings.HasPrefix(sys, DefaultHead) || !strings.Contains(sys, "written by the owner\n\nAnswer in French.") || !strings.Contains(sys, "The owner likes tea.") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	// The instructions swapped for a link to a file outside: left out at
	// the next message, the turn goes on, the notes stay.
	outside := filepath.Join(t.TempDir(), "evil.md")
	os.WriteFile(outside, []byte("EVIL"), 0o600)
	os.Remove(filepath.Join(fx.dir, prompt.InstructionsFile))
	os.Symlink(outside, filepath.Join(fx.dir, prompt.InstructionsFile))
	if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: "again"}, nil); err != nil {
		t.Fatal(err)
	}
	sys = contentText(wire.all()[1].Messages[0].Content)
	if strings.Contains(sys, "EVIL") || strings.Contains(sys, "French") || !strings.Contains(sys, "The owner likes tea.") {
		t.Fatalf("system prompt after the swap:\n%s", sys)
	}
	if !fx.log.has("instruction.md left out", "link") {
		t.Fatalf("log:\n%s", fx.log)
	}
}
