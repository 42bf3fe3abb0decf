package kernel_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// TestMissingBrokerRefusedAndLogged: a kernel run from a folder holding
// lnk alone (no lnk-fsbroker, no lnk-keybroker) says in its audit log
// that the key broker is not started, and refuses a start with folders
// (logged once, naming the missing program), leaving no start behind;
// a start with no folder, which needs no file broker, still runs. The
// positive control: with lnk-fsbroker beside lnk, the same start runs.
func TestMissingBrokerRefusedAndLogged(t *testing.T) {
	lonely := t.TempDir()
	os.Chmod(lonely, 0o755)
	b, err := os.ReadFile(testenv.Bin(t, "lnk"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lonely, "lnk"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	home := testenv.Home(t)
	startKernelOf(t, home, filepath.Join(lonely, "lnk"))
	waitAudit(t, home, "saying the key broker is missing", func(e audit.Entry) bool {
		return e.Kind == audit.KindKernel && strings.Contains(e.Reason, "lnk-keybroker") && strings.Contains(e.Reason, "not started")
	})
	c := connect(t, home)
	mainHome := makeAgent(t, home, "main")
	_, err = c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", Folders: []proto.Folder{{Path: mainHome, Read: true}}}, &proto.StartReply{})
	if err == nil || !strings.Contains(err.Error(), "lnk-fsbroker") {
		t.Fatalf("a start with folders and no file broker: %v", err)
	}
	n := 0
	for _, e := range auditLines(t, home) {
		if e.Kind == audit.KindRefuse && e.Route == "file broker" && strings.Contains(e.Reason, "lnk-fsbroker") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d refusals of the start logged, want 1:\n%s", n, dumpAudit(t, home))
	}
	if st, err := c.Status(ctx(t)); err != nil || st.Caps != 0 || len(st.Starts) != 0 {
		t.Fatalf("the refused start left something: %+v %v", st, err)
	}
	startAgent(t, c, "main") // no folder: no file broker needed

	home2 := testenv.Home(t)
	startKernel(t, home2)
	c2 := connect(t, home2)
	startAgent(t, c2, "main", proto.Folder{Path: makeAgent(t, home2, "main"), Read: true})
}
