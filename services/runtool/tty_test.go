package runtool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// TestCallHasNoTerminal: the run tool started with a terminal (a pty) as
// its controlling one, a call's command has none: /dev/tty does not
// open inside its sandbox, none of its stdio is a terminal, and nothing
// it writes reaches the terminal. The control: a shell started the same
// way, outside any sandbox, opens /dev/tty and its line reaches the
// pty's master.
func TestCallHasNoTerminal(t *testing.T) {
	a := testAgent(t, "")
	master, slave := openPTY(t)
	seen := readAll(master)
	withTTY := func(cmd *exec.Cmd) {
		cmd.ExtraFiles = []*os.File{slave}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	}
	ctl := exec.Command("sh", "-c", "echo control-reached-the-terminal > /dev/tty")
	withTTY(ctl)
	if out, err := ctl.CombinedOutput(); err != nil {
		t.Fatalf("the control could not write its terminal: %v %s", err, out)
	}
	if !waitFor(5*time.Second, func() bool { return strings.Contains(seen(), "control-reached-the-terminal") }) {
		t.Fatalf("the control's line never reached the terminal: %q", seen())
	}
	cmd := exec.Command(testenv.Bin(t, "lnk-run-tool"), "serve", "--agent", a.Name)
	cmd.Env = append(os.Environ(), "HOME="+a.Home)
	withTTY(cmd)
	var log bytes.Buffer
	cmd.Stderr = &log
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "lnk-test-client", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	script := `if (echo call-reached-the-terminal > /dev/tty) 2>/dev/null; then echo TTY-OPENED; else echo no-tty; fi
for fd in 0 1 2; do [ -t $fd ] && echo STDIO-$fd-IS-A-TERMINAL; done; true`
	text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"sh", "-c", script}})
	if isErr || !strings.Contains(text, "no-tty") || strings.Contains(text, "TTY-OPENED") || strings.Contains(text, "TERMINAL") {
		t.Fatalf("the call saw a terminal: %q (error %v)\n%s", text, isErr, log.String())
	}
	time.Sleep(100 * time.Millisecond) // what the call might have written is read by now
	if strings.Contains(seen(), "call-reached-the-terminal") {
		t.Fatalf("the call wrote to the run tool's terminal: %q", seen())
	}
}

// openPTY opens a pseudo-terminal's master and its slave, neither made
// this process's controlling terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	testenv.Require(t, err == nil, "pseudo-terminals (/dev/ptmx)")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// readAll reads f in the background; what it returns says what was read
// so far.
func readAll(f *os.File) func() string {
	var mu sync.Mutex
	var b strings.Builder
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			mu.Lock()
			b.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}
