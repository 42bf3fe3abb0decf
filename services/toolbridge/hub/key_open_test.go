package hub

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMachineKeyIsReadOnlyAsTheOwnersPrivateFile: the hub key is made
// once and read back the same (the positive control); a key others may
// read, a link or a fifo in its place is refused, the fifo without
// blocking (it once blocked for good).
func TestMachineKeyIsReadOnlyAsTheOwnersPrivateFile(t *testing.T) {
	dir := t.TempDir()
	k1, err := machineKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := machineKey(dir)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("read back: %v", err)
	}
	p := filepath.Join(toolsDir(dir), ".key")
	os.Chmod(p, 0o644)
	if _, err := machineKey(dir); err == nil {
		t.Error("a key others may read was taken")
	}
	os.Remove(p)
	os.WriteFile(filepath.Join(dir, "elsewhere"), []byte("00"), 0o600)
	os.Symlink(filepath.Join(dir, "elsewhere"), p)
	if _, err := machineKey(dir); err == nil {
		t.Error("a link was followed to the key")
	}
	os.Remove(p)
	unix.Mkfifo(p, 0o600)
	done := make(chan error, 1)
	go func() { _, err := machineKey(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a fifo was taken as the key")
		}
	case <-time.After(10 * time.Second):
		unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0)
		t.Fatal("reading a fifo as the key blocked")
	}
}
