package stdpipe

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGrow: a pipe is grown to the size asked, or to pipe-max-size where
// that is less, read back with F_GETPIPE_SZ from the other end's fd
// (control: it was the kernel's default before); a socket is no pipe and
// is left alone.
func TestGrow(t *testing.T) {
	child, parent, err := ForChild(false) // the child writes, parent reads
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	defer parent.Close()
	size := func() int {
		n, err := unix.FcntlInt(child.Fd(), unix.F_GETPIPE_SZ, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := 1 << 20
	if max, err := maxSize(); err != nil {
		t.Fatal(err)
	} else if max < want {
		want = max
	}
	if before := size(); before >= want {
		t.Fatalf("the pipe is %d bytes before it is grown: the test shows nothing", before)
	}
	got, err := parent.Grow(1 << 20)
	if err != nil || got != want || size() != want {
		t.Fatalf("grown to %d (F_GETPIPE_SZ %d, %v), want %d", got, size(), err, want)
	}

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	s := os.NewFile(uintptr(fds[0]), "socket")
	defer s.Close()
	rc, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pipe{f: s, rc: rc}
	if _, err := p.Grow(1 << 20); !errors.Is(err, ErrNotPipe) {
		t.Fatalf("a socket grown: %v", err)
	}
}
