package store

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestAnotherProcessesWriterMakesThisOneWait: a second harness process
// holding conversation t keeps this one's Open out (refused past its
// wait, saying why); once that process ends, this one opens and goes on
// from the other's last number.
func TestAnotherProcessesWriterMakesThisOneWait(t *testing.T) {
	if dir := os.Getenv("STORE_HOLD_DIR"); dir != "" {
		holdWriter(dir)
		return
	}
	dir, f := agent(t)
	c := chats(t, f)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAnotherProcessesWriterMakesThisOneWait$")
	cmd.Env = append(os.Environ(), "STORE_HOLD_DIR="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	held, _ := bufio.NewReader(stdout).ReadString('\n')
	if held != "held\n" {
		t.Fatalf("the other process said %q", held)
	}
	if _, err := c.Open("t", Options{LockWait: 100 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "another writer") {
		t.Fatalf("while another process holds it: %v", err)
	}
	stdin.Close()
	v, err := c.Open("t", Options{LockWait: 10 * time.Second})
	if err != nil {
		t.Fatalf("once it let go: %v", err)
	}
	defer v.Close()
	cmd.Wait()
	if n := says(t, v, "mine"); n != 2 {
		t.Errorf("went on at %d", n)
	}
	if got := texts(t, v); strings.Join(got, ",") != "theirs,mine" {
		t.Errorf("events %q", got)
	}
}

// holdWriter opens conversation t, appends one message, says "held",
// and keeps it until its stdin closes.
func holdWriter(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		os.Exit(2)
	}
	c, err := OpenChats(f)
	if err != nil {
		os.Exit(2)
	}
	v, err := c.Open("t", Options{})
	if err != nil {
		os.Exit(2)
	}
	v.Append(&Event{Kind: KindMessage, Text: "theirs"})
	os.Stdout.WriteString("held\n")
	io.Copy(io.Discard, os.Stdin)
	v.Close()
	os.Exit(0)
}
