package runtool

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/kernel/client"
)

// TestKernelKilledEndsABackgroundCommand: SIGKILL of the kernel while a
// background command runs ends its whole group (a child that left the
// group too), since no sandbox runs that the kernel does not record; its
// record is then ended, once, with one ending, and its supervisor gone.
// Before the kill the kernel lists the command's start (the control that
// it was recorded), and after it the next call starts a fresh kernel and
// runs.
func TestKernelKilledEndsABackgroundCommand(t *testing.T) {
	a := testAgent(t, "")
	cs := connect(t, a)
	m := mark()
	id := startBg(t, cs, "t", "sh", "-c", "(setsid sleep "+m+"1 &); sleep "+m)
	running := func() int { return len(processesWith("sleep", m)) + len(processesWith("sleep", m+"1")) }
	if !waitFor(10*time.Second, func() bool { return running() == 2 }) {
		t.Fatal("not running")
	}
	r := readRecord(t, a, id)
	kc, err := client.Connect(a.Home)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kc.Status(context.Background())
	kc.Close()
	if err != nil {
		t.Fatal(err)
	}
	recorded := false
	for _, s := range st.Starts {
		recorded = recorded || (s.Agent == a.Name && s.PID != 0)
	}
	if !recorded {
		t.Fatalf("the kernel does not record the background command's sandbox: %+v", st.Starts)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return running() == 0 }) {
		t.Fatal("the kernel's SIGKILL left the background command running")
	}
	if !waitFor(10*time.Second, func() bool { return !alive(r.Supervisor.PID) }) {
		t.Fatal("its supervisor outlives its command")
	}
	var text string
	if !waitFor(10*time.Second, func() bool {
		text, _ = call(t, cs, "t", "list", nil)
		return strings.Contains(text, id+" ended")
	}) {
		t.Fatalf("list after the kernel died: %q", text)
	}
	if r := readRecord(t, a, id); r.State != StateEnded || r.Ended.IsZero() {
		t.Fatalf("record: %+v", r)
	}
	endings := 0
	ents, _ := os.ReadDir(bgDir(a))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".ending.json") {
			endings++
		}
	}
	if endings != 1 {
		t.Fatalf("%d endings for one command", endings)
	}
	if text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"true"}}); isErr || !strings.Contains(text, "exit 0") {
		t.Fatalf("a call after the kernel's death: %q", text)
	}
}
