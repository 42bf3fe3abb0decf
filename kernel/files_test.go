package kernel_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// memfd holds data for a write request.
func memfd(t *testing.T, data []byte) *os.File {
	t.Helper()
	fd, err := unix.MemfdCreate("write", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "write")
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, 0)
	return f
}

func write(t *testing.T, c *client.Client, agent, handle, path string, data []byte) error {
	f := memfd(t, data)
	defer f.Close()
	_, err := c.Call(ctx(t), proto.Write, &proto.FileRequest{Agent: agent, Handle: handle, Path: path}, &proto.Empty{}, f)
	return err
}

func read(t *testing.T, c *client.Client, agent, handle, path string) ([]byte, error) {
	fs, err := c.Call(ctx(t), proto.Read, &proto.FileRequest{Agent: agent, Handle: handle, Path: path}, &proto.Empty{})
	if err != nil {
		return nil, err
	}
	defer fs[0].Close()
	return io.ReadAll(fs[0])
}

// fileKernel starts the CLI's kernel with lnk-fsbroker beside it, an
// agent "main" started with its Home writable and a second folder read
// only; it returns the client and both handles.
func fileKernel(t *testing.T) (home string, c *client.Client, rw, ro string, start uint64) {
	t.Helper()
	testenv.Bin(t, "lnk-fsbroker") // built beside lnk when LNK_BIN is unset
	home = testenv.Home(t)
	startKernel(t, home)
	c = connect(t, home)
	mainHome := makeAgent(t, home, "main")
	docs := filepath.Join(home, "docs")
	os.Mkdir(docs, 0o700)
	os.WriteFile(filepath.Join(docs, "read-me.txt"), []byte("only to read"), 0o600)
	s := startAgent(t, c, "main", proto.Folder{Path: mainHome, Read: true, Write: true}, proto.Folder{Path: docs, Read: true})
	return home, c, s.Caps[0].Handle, s.Caps[1].Handle, s.Start
}

// Reads and writes go through the start's file broker, within the
// capability's folder and rights; the log names the use, never the file.
func TestReadAndWriteThroughTheFileBroker(t *testing.T) {
	home, c, rw, ro, _ := fileKernel(t)
	if err := write(t, c, "main", rw, "notes/../a.txt", []byte("x")); err == nil {
		t.Fatal("a path with .. was written")
	}
	if err := write(t, c, "main", rw, "a.txt", []byte("secret words")); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(home, "Link", "Agents", "main", "Home", "a.txt"))
	if err != nil || string(got) != "secret words" {
		t.Fatalf("the file holds %q, %v", got, err)
	}
	if b, err := read(t, c, "main", rw, "a.txt"); err != nil || string(b) != "secret words" {
		t.Fatalf("read: %q %v", b, err)
	}
	if b, err := read(t, c, "main", ro, "read-me.txt"); err != nil || string(b) != "only to read" {
		t.Fatalf("read the read-only folder: %q %v", b, err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"write to a read-only capability", write(t, c, "main", ro, "new.txt", []byte("x"))},
		{"read through ..", func() error { _, err := read(t, c, "main", rw, "../../../.lnk/run/kernel.lock"); return err }()},
		{"read by another agent", func() error { _, err := read(t, c, "other", rw, "a.txt"); return err }()},
	} {
		var we *wire.Error
		if !errors.As(tc.err, &we) || we.Code != proto.CodeRefused {
			t.Errorf("%s: want a refusal, got %v", tc.name, tc.err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "docs", "new.txt")); err == nil {
		t.Error("a read-only capability wrote")
	}
	log := dumpAudit(t, home)
	if strings.Contains(log, "secret words") || strings.Contains(log, "a.txt") {
		t.Errorf("the log holds a file's contents or name:\n%s", log)
	}
	waitAudit(t, home, "the write's use", func(e audit.Entry) bool {
		return e.Kind == audit.KindUse && e.Request == "write" && e.Rights == "read,write"
	})
}

// kill -9 of the file broker during a 32 MiB write: the caller gets its answer
// or a broker error, never a hang; the file holds the old bytes or the
// new, never a mix; the broker is started again and the next write works.
func TestFileBrokerKilledDuringAWrite(t *testing.T) {
	home, c, rw, _, _ := fileKernel(t)
	path := filepath.Join(home, "Link", "Agents", "main", "Home", "big.bin")
	oldData := bytes.Repeat([]byte("A"), 32<<20)
	newData := bytes.Repeat([]byte("B"), 32<<20)
	if err := write(t, c, "main", rw, "big.bin", oldData); err != nil {
		t.Fatal(err)
	}
	first := fsBrokerPID(t, c, 0)
	done := make(chan error, 1)
	go func() { done <- write(t, c, "main", rw, "big.bin", newData) }()
	// Kill it mid-write: once its temp file beside big.bin appears (the
	// event that the write is in the broker's hands). Should the write
	// finish first, the kill lands after it, and the checks below hold
	// as well.
	midWrite := false
	for !midWrite {
		ents, _ := os.ReadDir(filepath.Dir(path))
		if len(ents) > 1 {
			midWrite = true
			break
		}
		select {
		case err := <-done:
			done <- err
		default:
			time.Sleep(200 * time.Microsecond) // leave the cores to the write
			continue
		}
		break
	}
	syscall.Kill(first, syscall.SIGKILL)
	err := <-done
	var we *wire.Error
	if err != nil && !(errors.As(err, &we) && we.Code == proto.CodeBroker) {
		t.Fatalf("the write during the kill: %v", err)
	}
	got, rerr := os.ReadFile(path)
	if rerr != nil || !(bytes.Equal(got, oldData) || (err == nil && bytes.Equal(got, newData))) {
		t.Fatalf("big.bin is half written (%d bytes, write err %v)", len(got), err)
	}
	fsBrokerPID(t, c, first)
	t.Logf("killed mid-write: %v; the write: %v", midWrite, err)
	// The broker's temp file may be left beside it (kill -9 leaves what
	// the broker was writing); big.bin itself is never half written.
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if e.Name() != "big.bin" {
			t.Logf("left in the folder by the killed broker: %s", e.Name())
		}
	}
	if err := write(t, c, "main", rw, "after.txt", []byte("ok")); err != nil {
		t.Fatalf("the write after the restart: %v", err)
	}
}

// fsBrokerPID polls status until a file broker is up with a pid other
// than not.
func fsBrokerPID(t *testing.T, c *client.Client, not int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.Status(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range st.Brokers {
			if strings.HasPrefix(b.Name, "fs/") && b.PID != 0 && b.PID != not {
				return b.PID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no file broker up (pid not %d) within 30 s: %+v", not, st.Brokers)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFileBrokerStartsAtTheFirstFileRequest: a start's file broker is no
// process until the start's first file request; that request starts it
// and is served; ending the start ends it, and a request naming the
// ended start's capability is refused without starting one again.
func TestFileBrokerStartsAtTheFirstFileRequest(t *testing.T) {
	_, c, rw, _, start := fileKernel(t)
	fsBrokers := func() int {
		st, err := c.Status(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range st.Brokers {
			if strings.HasPrefix(b.Name, "fs/") {
				n++
			}
		}
		return n
	}
	if n := fsBrokers(); n != 0 {
		t.Fatalf("a file broker runs before any file request: %d", n)
	}
	if err := write(t, c, "main", rw, "first.txt", []byte("1")); err != nil {
		t.Fatalf("the first write: %v", err)
	}
	pid := fsBrokerPID(t, c, 0)
	// Undumpable: its /proc files are root's, not the owner's (telling
	// only where the owner is not root: the user suite).
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d/environ", pid), &st); err != nil || st.Uid != 0 {
		t.Errorf("the file broker is dumpable: /proc/%d/environ is uid %d's (%v)", pid, st.Uid, err)
	}
	if got, err := read(t, c, "main", rw, "first.txt"); err != nil || string(got) != "1" {
		t.Fatalf("read back: %q %v", got, err)
	}
	if _, err := c.End(ctx(t), "main", start); err != nil {
		t.Fatal(err)
	}
	if n := fsBrokers(); n != 0 {
		t.Fatalf("the ended start's file broker still runs: %d", n)
	}
	if _, err := read(t, c, "main", rw, "first.txt"); err == nil {
		t.Fatal("the ended start's capability was served")
	}
	if n := fsBrokers(); n != 0 {
		t.Fatalf("a request naming a revoked capability started a file broker: %d", n)
	}
}
