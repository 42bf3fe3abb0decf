package runtool

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCallTrueAndAWrite: `true` answers exit 0; a command that writes in
// work/ (the folder the call names) lands there, and one writing outside
// what [files] write names fails inside the sandbox.
func TestCallTrueAndAWrite(t *testing.T) {
	a := testAgent(t, "")
	cs := connect(t, a)
	if text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"true"}}); isErr || text != "[exit 0]" {
		t.Fatalf("true: %v %q", isErr, text)
	}
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", "echo hi > out.txt && pwd"}, "folder": "work"})
	files := a.FilesDir()
	if isErr || !strings.Contains(text, filepath.Join(files, "work")) || !strings.HasSuffix(text, "[exit 0]") {
		t.Fatalf("write: %v %q", isErr, text)
	}
	if b, err := os.ReadFile(filepath.Join(files, "work", "out.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("work/out.txt: %q %v", b, err)
	}
	text, _ = call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", "echo x > top.txt"}})
	if strings.HasSuffix(text, "[exit 0]") {
		t.Fatalf("a write outside [files] write succeeded: %q", text)
	}
	if _, err := os.Stat(filepath.Join(files, "top.txt")); err == nil {
		t.Fatal("top.txt landed outside [files] write")
	}
}

// TestCallRefusesWhatCommandsLacks: a program [commands] does not name
// is refused by the tool, with the reason and the lnk command that would
// allow it; the same call of an allowed program runs (the control). With
// "*", a program named by a path that does not exist is left for the
// sandbox, and the answer is the sandbox's, not the tool's.
func TestCallRefusesWhatCommandsLacks(t *testing.T) {
	a := testAgent(t, "")
	cs := connect(t, a)
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"id"}})
	if !isErr || !strings.Contains(text, "id: not in the agent's [commands]") || !strings.Contains(text, "hint: lnk agent allow ada --command id") {
		t.Fatalf("id: %v %q", isErr, text)
	}
	if text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"echo", "ok"}}); isErr || text != "ok\n[exit 0]" {
		t.Fatalf("echo, allowed: %v %q", isErr, text)
	}
	// A path whose name [commands] has passes the tool's check, and the
	// sandbox, which resolves it, refuses it: enforced there too.
	text, isErr = call(t, cs, "", "command", map[string]any{"argv": []string{"/tmp/echo"}})
	if isErr || strings.HasSuffix(text, "[exit 0]") {
		t.Fatalf("/tmp/echo ran or was the tool's to refuse: %v %q", isErr, text)
	}
}

// TestCallWithAnyProgramLeavesAPathToTheSandbox: with "*", a path that
// exists nowhere is not looked at by the tool: the sandbox's exec fails.
func TestCallWithAnyProgramLeavesAPathToTheSandbox(t *testing.T) {
	a := testAgent(t, "")
	os.WriteFile(filepath.Join(a.Home, "Link", "Agents", "ada", "Config", "sandbox.toml"),
		[]byte(strings.Replace(baseSpec, `allow = ["sh"`, `allow = ["*", "sh"`, 1)), 0o600)
	cs := connect(t, a)
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"/nonexistent/prog"}})
	if isErr || strings.HasSuffix(text, "[exit 0]") || strings.Contains(text, "[commands]") {
		t.Fatalf("a path with *: %v %q", isErr, text)
	}
	if text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"/usr/bin/id", "-u"}}); isErr || !strings.HasSuffix(text, "[exit 0]") {
		t.Fatalf("/usr/bin/id with *: %v %q", isErr, text)
	}
}

// TestCallFolderThroughALinkIsRefused: a working folder reached through
// a link (the last name or one on the way) is refused; the folder it
// points at, named itself, works.
func TestCallFolderThroughALinkIsRefused(t *testing.T) {
	a := testAgent(t, "")
	files := a.FilesDir()
	os.MkdirAll(filepath.Join(files, "work", "real"), 0o700)
	os.Symlink("real", filepath.Join(files, "work", "ln"))
	os.Symlink("work", filepath.Join(files, "wl"))
	cs := connect(t, a)
	for _, f := range []string{"work/ln", "wl/real", "../x"} {
		text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"true"}, "folder": f})
		if !isErr {
			t.Errorf("folder %s: ran: %q", f, text)
		}
	}
	if text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", "pwd"}, "folder": "work/real"}); isErr || !strings.Contains(text, "work/real") {
		t.Fatalf("work/real: %v %q", isErr, text)
	}
}

// TestCallTimeoutEndsTheWholeGroup: at [tool.run] timeout less a tenth
// the call answers, and every process it started is gone: a child, and
// a grandchild that left the group twice over (setsid in a subshell).
// While the call runs they are seen (the control).
func TestCallTimeoutEndsTheWholeGroup(t *testing.T) {
	a := testAgent(t, "[tool.run]\ntimeout = \"3s\"\n")
	cs := connect(t, a)
	mark := fmt.Sprintf("%d.%d", 1000+rand.IntN(1000), rand.IntN(1_000_000))
	gc, child := mark+"1", mark+"2"
	seen := make(chan bool, 1)
	go func() {
		seen <- waitFor(20*time.Second, func() bool { return len(processesWith("sleep", gc)) > 0 && len(processesWith("sleep", child)) > 0 })
	}()
	start := time.Now()
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", "(setsid sh -c 'sleep " + gc + "' &) ; sleep " + child}})
	took := time.Since(start)
	if !<-seen {
		t.Fatal("the child and the grandchild were never seen running")
	}
	if isErr || !strings.Contains(text, "[stopped at its timeout, 2.7s") {
		t.Fatalf("timeout: %v %q", isErr, text)
	}
	if took < 2700*time.Millisecond {
		t.Fatalf("answered before its timeout: %s", took)
	}
	if left := append(processesWith("sleep", gc), processesWith("sleep", child)...); !waitFor(2*time.Second, func() bool { return len(processesWith("sleep", gc))+len(processesWith("sleep", child)) == 0 }) {
		t.Fatalf("left running after the call: %v", left)
	}
}

// TestCallOutputIsCut: output past [tool.run] output is cut and the
// answer says so; output within it is whole and says nothing.
func TestCallOutputIsCut(t *testing.T) {
	a := testAgent(t, "[tool.run]\noutput = 100\n")
	cs := connect(t, a)
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", "i=0; while [ $i -lt 50 ]; do echo 0123456789; i=$((i+1)); done"}})
	if isErr || !strings.HasPrefix(text, strings.Repeat("0123456789\n", 9)+"0\n[exit 0]\n[output cut: the first 100 of 550 bytes kept") {
		t.Fatalf("cut: %v %q", isErr, text)
	}
	if text, _ := call(t, cs, "", "command", map[string]any{"argv": []string{"echo", "short"}}); text != "short\n[exit 0]" {
		t.Fatalf("within the cap: %q", text)
	}
}

// TestCallHasNoStdin: the command's stdin is empty (/dev/null), never the
// tool's own (the MCP stream).
func TestCallHasNoStdin(t *testing.T) {
	a := testAgent(t, "")
	cs := connect(t, a)
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", "cat; echo end; [ -t 0 ] || [ -t 1 ] || echo noterm"}})
	if isErr || text != "end\nnoterm\n[exit 0]" {
		t.Fatalf("%v %q", isErr, text)
	}
}
