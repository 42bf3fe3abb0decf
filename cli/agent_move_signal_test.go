package cli

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestMoveEndsAsAFailureOnSignal sends Ctrl-C (SIGINT), a closed
// terminal's SIGHUP and a stop (SIGTERM) to real lnk processes midway
// through a move, and closes a real terminal under a sender. The sender, signalled while its stream is still being
// read, exits with a failure and writes no final record, though its
// reader then drains all it writes: the receive of what it wrote is
// refused, nothing placed. The receiver, signalled while its staging
// folder fills, exits with a failure though the whole stream then comes:
// nothing is placed and its staging folder is gone. The positive
// control: the same whole stream, received with no signal, arrives.
func TestMoveEndsAsAFailureOnSignal(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	from, to := testenv.Home(t), testenv.Home(t)
	run := func(home string, stdin io.Reader, args ...string) *exec.Cmd {
		c := exec.Command(lnk, args...)
		c.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}
		c.Stdin = stdin
		return c
	}
	if out, err := run(from, nil, "agent", "create", "main").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	a, err := caps.LoadAgent(from, "main")
	if err != nil {
		t.Fatal(err)
	}
	lf, lt := caps.Layout{Home: from}, caps.Layout{Home: to}
	// 64 files of 256 KiB: far more than a pipe and lnk's buffers hold.
	for i := range 64 {
		b := make([]byte, 256<<10)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(lf.FilesDir("main"), "work", fmt.Sprintf("f%02d.bin", i)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := run(from, nil, "agent", "pause", "main").CombinedOutput(); err != nil {
		t.Fatalf("pause: %v: %s", err, out)
	}
	keyFile := filepath.Join(to, "move.key")
	pubOut, err := run(to, nil, "key", "new", "--out", keyFile).Output()
	if err != nil {
		t.Fatalf("lnk key new: %v", err)
	}
	pub := strings.TrimSpace(string(pubOut))
	whole, err := run(from, nil, "agent", "state-send", "main", "--to", pub).Output()
	if err != nil {
		t.Fatalf("a whole state-send: %v", err)
	}
	placed := func() bool {
		_, err := os.Lstat(lt.AgentDir("main"))
		return err == nil
	}
	staging := filepath.Join(lt.Agents(), ".moving", a.ID)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM} {
		// The sender, signalled with its stream half read.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		send := run(from, nil, "agent", "state-send", "main", "--to", pub)
		var serr bytes.Buffer
		send.Stdout, send.Stderr = w, &serr
		if err := send.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		head := make([]byte, 2<<20)
		if _, err := io.ReadFull(r, head); err != nil {
			t.Fatalf("%v: reading the stream's start: %v", sig, err)
		}
		send.Process.Signal(sig)
		rest, _ := io.ReadAll(r)
		r.Close()
		send.Wait()
		if code := send.ProcessState.ExitCode(); code != ExitFailure || !strings.Contains(serr.String(), "stopped") {
			t.Errorf("%v to the sender: exit %d, %q; want %d, stopped", sig, code, serr.String(), ExitFailure)
		}
		cut := append(head, rest...)
		if len(cut) >= len(whole) {
			t.Errorf("%v to the sender: it wrote %d bytes, a whole stream is %d", sig, len(cut), len(whole))
		}
		recv := run(to, bytes.NewReader(cut), "agent", "receive", "--key", keyFile)
		if out, err := recv.CombinedOutput(); err == nil || placed() {
			t.Fatalf("%v: the sender's cut stream was received (%v): %s", sig, err, out)
		}

		// The receiver, signalled while its staging folder fills; the
		// rest of the whole stream comes after.
		in, feed, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		recv = run(to, in, "agent", "receive", "--key", keyFile)
		var rerr bytes.Buffer
		recv.Stderr = &rerr
		if err := recv.Start(); err != nil {
			t.Fatal(err)
		}
		in.Close()
		half := len(whole) / 2
		signalled, fed := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(fed)
			feed.Write(whole[:half])
			<-signalled
			feed.Write(whole[half:])
			feed.Close()
		}()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(staging, "files")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: the receive never began unpacking: %s", sig, rerr.String())
			}
		}
		recv.Process.Signal(sig)
		close(signalled)
		recv.Wait()
		<-fed
		if code := recv.ProcessState.ExitCode(); code != ExitFailure || !strings.Contains(rerr.String(), "stopped") {
			t.Errorf("%v to the receiver: exit %d, %q; want %d, stopped", sig, code, rerr.String(), ExitFailure)
		}
		if placed() {
			t.Fatalf("%v to the receiver: the agent was placed", sig)
		}
		if _, err := os.Lstat(staging); !os.IsNotExist(err) {
			t.Errorf("%v to the receiver: its staging folder is left: %v", sig, err)
		}
	}
	// A real closed terminal: state-send runs in a session of its own
	// whose controlling terminal is a pseudo-terminal; closing its master
	// midway hangs it up, and the kernel sends the session's leader
	// SIGHUP.
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	testenv.Require(t, err == nil, "pseudo-terminals (/dev/ptmx)")
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	ptn, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", ptn), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	send := run(from, tty, "agent", "state-send", "main", "--to", pub)
	var serr bytes.Buffer
	send.Stdout, send.Stderr = w, &serr
	send.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := send.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	tty.Close()
	head := make([]byte, 2<<20)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatalf("closed terminal: reading the stream's start: %v", err)
	}
	master.Close()
	rest, _ := io.ReadAll(r)
	r.Close()
	send.Wait()
	if code := send.ProcessState.ExitCode(); code != ExitFailure || !strings.Contains(serr.String(), "stopped") {
		t.Errorf("a closed terminal: exit %d, %q; want %d, stopped", code, serr.String(), ExitFailure)
	}
	if out, err := run(to, bytes.NewReader(append(head, rest...)), "agent", "receive", "--key", keyFile).CombinedOutput(); err == nil || placed() {
		t.Fatalf("a closed terminal: the cut stream was received (%v): %s", err, out)
	}

	// The positive control.
	if out, err := run(to, bytes.NewReader(whole), "agent", "receive", "--key", keyFile).CombinedOutput(); err != nil || !placed() {
		t.Fatalf("the whole stream, with no signal: %v: %s", err, out)
	}
}
