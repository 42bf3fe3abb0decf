package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

// TestAgentCollectionsReadOnly: an agent's sandbox reads its
// instructions, skills and chats and writes none of them, and reaches
// neither memory/ nor schedule/; it writes Home/work (the control).
func TestAgentCollectionsReadOnly(t *testing.T) {
	w := newWorld(t)
	if _, err := caps.CreateAgent(w.home, "ada"); err != nil {
		t.Fatal(err)
	}
	own := caps.Layout{Home: w.home}.OwnDir("ada")
	for _, f := range []string{"instructions/instruction.md", "skills/s.md", "chats/c.jsonl", "memory/notes.md", "schedule/jobs.json"} {
		write(t, filepath.Join(own, f), "owner's "+f)
	}
	c, err := caps.CompileAgent(w.home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	script := `o=$1
for f in instructions/instruction.md skills/s.md chats/c.jsonl; do cat "$o/$f" >/dev/null && echo "read $f"; done
for f in instructions/instruction.md skills/s.md chats/c.jsonl; do echo x >> "$o/$f" 2>/dev/null && echo "wrote $f"; done
echo x > "$o/chats/new.jsonl" 2>/dev/null && echo "made a chat"
cat "$o/memory/notes.md" 2>/dev/null && echo "read memory"
ls "$o/schedule" 2>/dev/null && echo "listed schedule"
echo x > "$2/f" && echo control-ok
exit 0`
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c", script, "sh", own, filepath.Join(c.FilesDir, "work"))
	want := "read instructions/instruction.md\nread skills/s.md\nread chats/c.jsonl\ncontrol-ok"
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("code %d, out %q, want %q; err %q", code, out, want, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(own, "chats/c.jsonl")); string(b) != "owner's chats/c.jsonl" {
		t.Fatalf("chats changed: %q", b)
	}
}
