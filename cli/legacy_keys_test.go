package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// An agent's start names a key an older Link left behind, and how to give
// it again, and never reads or removes it.
func TestAgentStartNamesLegacyKeys(t *testing.T) {
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(home, "Link", "Agent", "harness.toml")
	os.MkdirAll(filepath.Dir(old), 0o700)
	os.WriteFile(old, []byte("model_key = \"sk-old-value\"\n"), 0o600)
	var out, errb bytes.Buffer
	// A command that cannot run: the start's messages come before the
	// sandbox, whatever it then says.
	Main(context.Background(), []string{"sandbox", "run", "--agent", "ada", "--", "/nonexistent/program"}, &out, &errb)
	s := errb.String()
	if !strings.Contains(s, old) || !strings.Contains(s, "lnk secret create AGENT_ADA_MODEL_KEY") || strings.Contains(s, "sk-old-value") {
		t.Fatalf("the start said %q", s)
	}
	if b, err := os.ReadFile(old); err != nil || !strings.Contains(string(b), "sk-old-value") {
		t.Fatalf("the old key was changed or removed: %v", err)
	}
}
