package scmrights

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// pair is a connected SOCK_SEQPACKET socketpair: send on s, receive on r.
func pair(t *testing.T) (s, r int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// openFDs is how many fds this process has open.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory's own fd
}

// sendFiles sends data with n fresh fds (the sender's copies closed after).
func sendFiles(t *testing.T, s int, data string, n int, extra []byte) {
	t.Helper()
	var fds []int
	for range n {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	var oob []byte
	if n > 0 {
		oob = unix.UnixRights(fds...)
	}
	oob = append(oob, extra...)
	if err := unix.Sendmsg(s, []byte(data), oob, nil, 0); err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// refused receives on r and wants a *Refusal, no fds, and the process's
// fd count back where it was before the message was sent.
func refused(t *testing.T, r int, p, oob []byte, max, before int) {
	t.Helper()
	n, fds, err := Recv(r, p, oob, nil, max, 0)
	var ref *Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("Recv = %d, %v, %v; want a refusal", n, fds, err)
	}
	if len(fds) != 0 {
		t.Errorf("a refusal returned fds %v", fds)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d fds open before the message, %d after its refusal (%v): fds leaked", before, after, err)
	}
	t.Logf("refused: %v", err)
}

// TestRecvTakesRightsCloseOnExec is the positive control: fds within the
// cap arrive, close-on-exec, with the data.
func TestRecvTakesRightsCloseOnExec(t *testing.T) {
	s, r := pair(t)
	before := openFDs(t)
	sendFiles(t, s, "hello", 2, nil)
	p, oob := make([]byte, 64), make([]byte, Space(2))
	n, fds, err := Recv(r, p, oob, nil, 2, 0)
	if err != nil || string(p[:n]) != "hello" || len(fds) != 2 {
		t.Fatalf("Recv = %q, %v, %v", p[:n], fds, err)
	}
	for _, fd := range fds {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Errorf("fd %d received without close-on-exec (flags %#x, %v)", fd, fl, err)
		}
		unix.Close(fd)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d fds before, %d after closing what came", before, after)
	}
}

// TestRecvRefusesOverCap: one fd over the caller's cap (which the
// buffer's padding still holds) is refused, every fd closed.
func TestRecvRefusesOverCap(t *testing.T) {
	s, r := pair(t)
	before := openFDs(t)
	sendFiles(t, s, "x", 2, nil)
	// Space(1) holds two: the kernel delivers both, and the count check
	// refuses them.
	refused(t, r, make([]byte, 64), make([]byte, Space(1)), 1, before)
}

// TestRecvRefusesTruncatedControl: more fds than the control buffer
// holds arrive cut short (MSG_CTRUNC); the ones that did arrive are
// closed.
func TestRecvRefusesTruncatedControl(t *testing.T) {
	s, r := pair(t)
	before := openFDs(t)
	sendFiles(t, s, "x", 6, nil)
	refused(t, r, make([]byte, 64), make([]byte, Space(2)), 2, before)
}

// TestRecvRefusesTruncatedData: data over the buffer (MSG_TRUNC) is
// refused with the fds that came with it closed.
func TestRecvRefusesTruncatedData(t *testing.T) {
	s, r := pair(t)
	before := openFDs(t)
	sendFiles(t, s, "a message longer than the buffer", 1, nil)
	refused(t, r, make([]byte, 4), make([]byte, Space(1)), 1, before)
}

// TestRecvRefusesCredentials: SCM_CREDENTIALS beside the rights is
// refused, and the rights' fds closed.
func TestRecvRefusesCredentials(t *testing.T) {
	s, r := pair(t)
	if err := unix.SetsockoptInt(r, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	creds := unix.UnixCredentials(&unix.Ucred{Pid: int32(os.Getpid()), Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())})
	sendFiles(t, s, "x", 1, creds)
	refused(t, r, make([]byte, 64), make([]byte, Space(1)+len(creds)), 1, before)
}

// TestRecvPassesSocketErrors: a failed recvmsg is its errno, not a
// refusal (the caller tells EAGAIN from a gone peer).
func TestRecvPassesSocketErrors(t *testing.T) {
	_, r := pair(t)
	_, _, err := Recv(r, make([]byte, 8), make([]byte, Space(1)), nil, 1, unix.MSG_DONTWAIT)
	if err != unix.EAGAIN {
		t.Fatalf("Recv on an empty socket, MSG_DONTWAIT = %v; want EAGAIN", err)
	}
}

// TestParseRefusesBadRightsLength: an SCM_RIGHTS whose length is not a
// whole number of fds (which the kernel never writes, but a parser at a
// boundary must not trust) is refused, as is a header running past the
// data; a good one parses.
func TestParseRefusesBadRightsLength(t *testing.T) {
	good := unix.UnixRights(7, 8)
	if fds, err := Parse(nil, good); err != nil || len(fds) != 2 || fds[0] != 7 || fds[1] != 8 {
		t.Fatalf("Parse(good) = %v, %v", fds, err)
	}
	odd := append([]byte(nil), good...)
	putLen(odd, unix.CmsgLen(6))
	if fds, err := Parse(nil, odd); err == nil {
		t.Errorf("SCM_RIGHTS of 6 bytes taken: %v", fds)
	}
	long := append([]byte(nil), good...)
	putLen(long, len(good)+1)
	if fds, err := Parse(nil, long); err == nil || len(fds) != 0 {
		t.Errorf("header past the data: %v, %v", fds, err)
	}
}

func putLen(b []byte, l int) {
	if unix.SizeofCmsghdr == 16 {
		for i := range 8 {
			b[i] = byte(uint64(l) >> (8 * i))
		}
	} else {
		for i := range 4 {
			b[i] = byte(uint32(l) >> (8 * i))
		}
	}
}
