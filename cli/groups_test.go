package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestNoEmptyGroup: every command group lnk lists has commands of its
// own; `lnk tool`, which had none (the tools are `lnk sandbox tool`), is
// no command, refused as any unknown one is, while `lnk sandbox tool`
// answers (the positive control).
func TestNoEmptyGroup(t *testing.T) {
	root := NewRoot(new(bytes.Buffer), new(bytes.Buffer))
	for _, g := range groups {
		c, _, err := root.Find([]string{g.name})
		if err != nil || c == root || !c.HasAvailableSubCommands() {
			t.Errorf("lnk %s lists no command of its own (%v)", g.name, err)
		}
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"--help"}, &out, &errb); code != 0 || strings.Contains(out.String(), "\n  tool ") || !strings.Contains(out.String(), "\n  sandbox ") {
		t.Errorf("lnk --help (exit %d) lists:\n%s", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main(context.Background(), []string{"tool"}, &out, &errb); code != ExitUsage || !strings.Contains(errb.String(), `unknown command "tool"`) {
		t.Errorf("lnk tool: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"sandbox", "tool", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "\n  add ") {
		t.Errorf("lnk sandbox tool --help: exit %d\n%s", code, out.String())
	}
}
