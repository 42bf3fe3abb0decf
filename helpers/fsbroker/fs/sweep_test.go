package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/resolve"
)

// TestKillMidWriteThenSweep kills the real broker with SIGKILL while a
// large write is in progress (its temporary file seen beside the target,
// the broker stopped to be sure the write has not finished), and shows:
// the target holds its old bytes, the temporary file stays; a new broker
// leaves it while it is young and removes it once it is old, and never
// removes a link of the same shape nor what it points to.
func TestKillMidWriteThenSweep(t *testing.T) {
	tr := newTree(t)
	target := filepath.Join(tr.home, "big")
	must(t, os.WriteFile(target, []byte("old"), 0o600))
	decoy := filepath.Join(tr.home, ".lnk-tmp-"+strings.Repeat("f", 32))
	must(t, os.Symlink(filepath.Join(tr.outside, "sentinel"), decoy))
	old := time.Now().Add(-time.Hour)
	tv := unix.NsecToTimeval(old.UnixNano())
	must(t, unix.Lutimes(decoy, []unix.Timeval{tv, tv}))
	data := bytes.Repeat([]byte("n"), 64<<20)

	var leftover string
	for attempt := 1; attempt <= 5 && leftover == ""; attempt++ {
		leftover = killMidWrite(t, tr, data)
		t.Logf("attempt %d: leftover %q", attempt, leftover)
	}
	if leftover == "" {
		t.Fatal("five large writes each finished before the broker could be stopped mid-write")
	}
	if b, err := os.ReadFile(target); err != nil || !(string(b) == "old" || bytes.Equal(b, data)) {
		t.Fatalf("target after a kill mid-write: %d bytes, %v: half-written", len(b), err)
	}

	startBroker(t, tr) // its sweep leaves a young leftover
	if _, err := os.Lstat(leftover); err != nil {
		t.Fatalf("a young leftover was swept: %v", err)
	}
	must(t, os.Chtimes(leftover, old, old))
	c, _ := startBroker(t, tr) // its sweep is done once the hello is answered
	if _, err := os.Lstat(leftover); !os.IsNotExist(err) {
		t.Fatalf("an old leftover stayed after a broker started: %v", err)
	}
	if _, err := os.Lstat(decoy); err != nil {
		t.Fatalf("a link of the temporary file's shape was swept: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(tr.outside, "sentinel")); err != nil || string(b) != "secret" {
		t.Fatalf("the link's target changed: %q %v", b, err)
	}
	if _, err := c.Write(context.Background(), "home", "small", []byte("x"), WriteOptions{}); err != nil {
		t.Fatalf("the sweeping broker does not serve: %v", err)
	}
}

// killMidWrite starts a broker, writes data to "big" through it and, once
// the write's temporary file shows, stops the broker; if the file is
// still there the write is in progress, and the broker is killed. It
// returns the leftover's path, or "" if the write finished first.
func killMidWrite(t *testing.T, tr tree, data []byte) string {
	c, p := startBroker(t, tr)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(context.Background(), "home", "big", data, WriteOptions{})
		errc <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			return "" // finished before it was seen
		default:
		}
		name := tempIn(t, tr.home)
		if name == "" {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		must(t, syscall.Kill(p.Pid(), syscall.SIGSTOP))
		if tempIn(t, tr.home) != name {
			must(t, syscall.Kill(p.Pid(), syscall.SIGCONT))
			if err := <-errc; err != nil {
				t.Fatalf("write: %v", err)
			}
			return ""
		}
		must(t, syscall.Kill(p.Pid(), syscall.SIGKILL))
		select {
		case <-p.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("the killed broker did not exit")
		}
		select {
		case err := <-errc:
			if err == nil {
				t.Fatal("a write whose broker was killed mid-way succeeded")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a write whose broker was killed hangs")
		}
		return filepath.Join(tr.home, name)
	}
	t.Fatal("the write's temporary file never showed")
	return ""
}

// tempIn names the regular file of a temporary file's shape in dir, or "".
func tempIn(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() && resolve.IsTempName(e.Name()) {
			return e.Name()
		}
	}
	return ""
}
