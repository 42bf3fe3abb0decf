package scmrights

import (
	"golang.org/x/sys/unix"
)

// Space is the size of a control buffer for a cap of max fds: room for
// one more, so that a message one over the cap arrives whole and is
// refused by its count (with the count in the reason); more than that
// arrives cut short (MSG_CTRUNC) and is refused as such.
func Space(max int) int { return unix.CmsgSpace(4 * (max + 1)) }

// Recv reads one message from the socket fd: its data into p, its
// control data into oob (at least [Space](max) bytes), its fds appended
// to fds[:0]. flags are added to MSG_CMSG_CLOEXEC (MSG_DONTWAIT, say);
// EINTR is retried. It returns n, the data's length, and the fds.
//
// A failed recvmsg returns its errno as it is (EAGAIN, ECONNRESET, …)
// and no fds. A message refused (see the package doc) returns a
// *[Refusal], unwrapped (a type assertion finds it without allocating),
// every fd that came with it closed, and none.
func Recv(fd int, p, oob []byte, fds []int, max, flags int) (int, []int, error) {
	var n, oobn, rflags int
	var err error
	for {
		n, oobn, rflags, err = recvmsg(fd, p, oob, flags|unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, fds[:0], err
	}
	got, err := Parse(fds[:0], oob[:oobn])
	switch {
	case err != nil:
	case rflags&unix.MSG_CTRUNC != 0:
		err = refuse("control data cut short (MSG_CTRUNC): more fds than the cap of %d", max)
	case len(got) > max:
		err = refuse("%d fds, over the cap of %d", len(got), max)
	case rflags&unix.MSG_TRUNC != 0:
		err = refuse("a message over the %d-byte cap of the buffer (MSG_TRUNC)", len(p))
	}
	if err != nil {
		for _, fd := range got {
			unix.Close(fd)
		}
		return n, got[:0], err
	}
	return n, got, nil
}
