package filetool_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/services/filetool"
)

// TestAMisbehavingProcessIsEnded: an answer that is not {"ok"} or
// {"error"} ends the sandboxed process and everything in its group (a
// child it left behind included), and the next call starts a new one.
func TestAMisbehavingProcessIsEnded(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	script := `echo $$ >>` + starts + `; sleep 300 & echo $! >` + filepath.Join(dir, "child") + `; read l; echo '{"ok":1,"extra":2}'; read l`
	sb := &filetool.Sandboxed{Argv: []string{"/bin/sh", "-c", script}}
	t.Cleanup(func() { sb.Close() })
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		_, err := sb.Call(ctx, "list", nil)
		if err == nil || !strings.Contains(err.Error(), `neither {"ok"} nor {"error"}`) {
			t.Fatalf("call %d: %v", i, err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "child"))
		child := strings.TrimSpace(string(b))
		waitFor(t, "the group's child to be gone", func() bool {
			st, err := os.ReadFile("/proc/" + child + "/stat")
			return err != nil || strings.Contains(string(st), ") Z ")
		})
	}
	b, _ := os.ReadFile(starts)
	if n := len(strings.Fields(string(b))); n != 2 {
		t.Fatalf("%d starts for two calls to a process that failed each", n)
	}
}
