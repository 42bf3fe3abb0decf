package secret

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

func pipeWith(t *testing.T, data string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() { w.WriteString(data); w.Close() }()
	return r
}

func TestReadFromAPipe(t *testing.T) {
	var prompt strings.Builder
	v, err := Read(pipeWith(t, "sk-from-stdin\n"), &prompt, "value: ")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy()
	if string(v.Bytes()) != "sk-from-stdin" || prompt.Len() != 0 {
		t.Fatalf("read %d bytes, prompted %q", v.Len(), prompt.String())
	}
	if _, err := Read(pipeWith(t, "\n"), &prompt, ""); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty: %v", err)
	}
	if _, err := Read(pipeWith(t, strings.Repeat("x", MaxRead+1)), &prompt, ""); !errors.Is(err, ErrTooLong) {
		t.Fatalf("too long: %v", err)
	}
}

// TestReadFromATerminalWithEchoOff types a value into a real pseudo-
// terminal and checks the terminal echoed none of it, and got its
// settings back.
func TestReadFromATerminalWithEchoOff(t *testing.T) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	testenv.Require(t, err == nil, "pseudo-terminals (/dev/ptmx)")
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	before, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if before.Lflag&unix.ECHO == 0 {
		t.Fatal("a fresh terminal without echo proves nothing")
	}
	type result struct {
		v   *Value
		err error
	}
	done := make(chan result, 1)
	var prompt strings.Builder
	go func() {
		v, err := Read(slave, &prompt, "value: ")
		done <- result{v, err}
	}()
	// Wait for Read to turn echo off before typing: poll the terminal.
	deadline := time.Now().Add(20 * time.Second)
	for {
		tio, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Read never turned echo off")
		}
		time.Sleep(5 * time.Millisecond)
	}
	master.WriteString("sk-typed-value\n")
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.v.Destroy()
	if string(r.v.Bytes()) != "sk-typed-value" {
		t.Fatalf("read %d bytes, not what was typed", r.v.Len())
	}
	after, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if after.Lflag != before.Lflag {
		t.Fatalf("terminal flags %#x after, %#x before", after.Lflag, before.Lflag)
	}
	// What the terminal showed: only the newline (ECHONL), never the value.
	unix.SetNonblock(int(master.Fd()), true)
	echoed := make([]byte, 256)
	k, _ := master.Read(echoed)
	if strings.Contains(string(echoed[:max(k, 0)]), "sk-typed") {
		t.Fatalf("the terminal echoed the value: %q", echoed[:k])
	}
	if prompt.String() != "value: " {
		t.Fatalf("prompt %q", prompt.String())
	}
}
