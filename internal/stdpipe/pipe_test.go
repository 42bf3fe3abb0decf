package stdpipe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPipe: a Pipe's reads and writes carry everything in order, a write
// past the pipe's buffer waits in the poller for the reader, the end of
// the other side is io.EOF, and Close ends a read waiting in the poller.
func TestPipe(t *testing.T) {
	child, parent, err := ForChild(true) // parent writes, "child" reads
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB, past a pipe's 64 KiB
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(child); got <- b }()
	if n, err := parent.Write(big); n != len(big) || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	parent.Close()
	select {
	case b := <-got:
		if !bytes.Equal(b, big) {
			t.Fatalf("read %d bytes, not what was written", len(b))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reader never saw the end")
	}

	child2, reader, err := ForChild(false) // "child" writes, parent reads
	if err != nil {
		t.Fatal(err)
	}
	child2.Write([]byte("line\n"))
	b := make([]byte, 16)
	if n, err := reader.Read(b); string(b[:n]) != "line\n" || err != nil {
		t.Fatalf("read: %q %v", b[:n], err)
	}
	done := make(chan error, 1)
	go func() { _, err := reader.Read(b); done <- err }()
	reader.Close() // while the read waits in the poller
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("a read under Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end the read waiting")
	}
	child2.Close()
}

// TestStdLeavesFilesAlone: a regular file (or a terminal) is not made
// non-blocking or wrapped.
func TestStdLeavesFilesAlone(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if g, ok := Std(f).(*os.File); !ok || g != f {
		t.Fatal("a regular file was wrapped as a pipe")
	}
}
