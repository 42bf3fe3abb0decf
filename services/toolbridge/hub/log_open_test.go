package hub

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenLogRefusesAFifoOrLinkAndKeepsAFullLog: a fifo at the log's name
// is refused (it once blocked the hub for good), a link too, and a full
// log is kept as .1 with a new one started (the positive control).
func TestOpenLogRefusesAFifoOrLinkAndKeepsAFullLog(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.log")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := openLog(fifo)
		if l != nil {
			l.f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a fifo was taken as the log")
		}
	case <-time.After(10 * time.Second):
		unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0) // let the stuck open finish
		t.Fatal("opening a fifo as the log blocked")
	}
	os.WriteFile(filepath.Join(dir, "target"), nil, 0o600)
	os.Symlink("target", filepath.Join(dir, "link.log"))
	if _, err := openLog(filepath.Join(dir, "link.log")); err == nil {
		t.Error("a link was followed to the log")
	}
	full := filepath.Join(dir, "full.log")
	os.WriteFile(full, make([]byte, MaxLog), 0o600)
	l, err := openLog(full)
	if err != nil {
		t.Fatal(err)
	}
	l.f.Close()
	if fi, err := os.Stat(full + ".1"); err != nil || fi.Size() != MaxLog {
		t.Errorf("the full log was not kept as .1: %v", err)
	}
	if fi, err := os.Stat(full); err != nil || fi.Size() != 0 {
		t.Errorf("no new log: %v", err)
	}
}

// TestTakeLockRefusesAFifoOrALooseFile: the hub's lock is a 0600 regular
// file of the owner's; it is made and taken (the positive control), and a
// second taker is told another hub runs.
func TestTakeLockRefusesAFifoOrALooseFile(t *testing.T) {
	dir := t.TempDir()
	fd, err := takeLock(filepath.Join(dir, "ok.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := takeLock(filepath.Join(dir, "ok.lock")); err != ErrRunning {
		t.Errorf("a second taker: %v", err)
	}
	unix.Mkfifo(filepath.Join(dir, "fifo.lock"), 0o600)
	if fd, err := takeLock(filepath.Join(dir, "fifo.lock")); err == nil {
		unix.Close(fd)
		t.Error("a fifo was taken as the lock")
	}
	os.WriteFile(filepath.Join(dir, "loose.lock"), nil, 0o600)
	os.Chmod(filepath.Join(dir, "loose.lock"), 0o666)
	if fd, err := takeLock(filepath.Join(dir, "loose.lock")); err == nil {
		unix.Close(fd)
		t.Error("a lock anyone may write was taken")
	}
}
