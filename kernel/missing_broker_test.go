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

// TestMissingKeyBrokerRefusesAgentKey: a kernel run from a folder
// without lnk-keybroker refuses a start naming an agent ID (it would run
// without the agent's key), with an error naming the missing program,
// logged once, and leaves no start behind. The positive control: the
// same start with lnk-keybroker beside lnk runs and makes the key.
func TestMissingKeyBrokerRefusesAgentKey(t *testing.T) {
	lonely := t.TempDir()
	os.Chmod(lonely, 0o755)
	for _, name := range []string{"lnk", "lnk-fsbroker"} {
		b, err := os.ReadFile(testenv.Bin(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lonely, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const id = "0123456789abcdef0123456789abcdef"
	home := testenv.Home(t)
	startKernelOf(t, home, filepath.Join(lonely, "lnk"))
	c := connect(t, home)
	makeAgent(t, home, "main")
	_, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", AgentID: id, Folders: []proto.Folder{}}, &proto.StartReply{})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(lonely, "lnk-keybroker")) {
		t.Fatalf("a start naming an agent ID with no key broker: %v, want a refusal naming %s", err, filepath.Join(lonely, "lnk-keybroker"))
	}
	n := 0
	for _, e := range auditLines(t, home) {
		if e.Kind == audit.KindRefuse && e.Route == "agent key" && strings.Contains(e.Reason, "lnk-keybroker") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d refusals of the start logged, want 1:\n%s", n, dumpAudit(t, home))
	}
	if st, err := c.Status(ctx(t)); err != nil || st.Caps != 0 || len(st.Starts) != 0 {
		t.Fatalf("the refused start left something: %+v %v", st, err)
	}

	home2 := testenv.Home(t)
	startKernel(t, home2)
	c2 := connect(t, home2)
	makeAgent(t, home2, "main")
	if _, err := c2.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", AgentID: id, Folders: []proto.Folder{}}, &proto.StartReply{}); err != nil {
		t.Fatalf("the same start with lnk-keybroker beside lnk: %v", err)
	}
	waitAudit(t, home2, "the agent key granted", func(e audit.Entry) bool { return e.Kind == audit.KindGrant && e.Route == "agent key" })
}
