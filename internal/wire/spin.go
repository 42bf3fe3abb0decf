package wire

import (
	"time"

	"golang.org/x/sys/unix"
)

// Before a reader sleeps in recvmsg it spins: it tries recvmsg without
// waiting (MSG_DONTWAIT) for up to spinFor, giving the CPU away
// (sched_yield) between tries. A reply that comes within the window is
// read without the sleep and the wake-up, which on a virtual machine
// whose idle CPUs halt cost more than the request itself: a caller's
// reply (an fsbroker open answers well within the window) and a server's next
// request in a burst both land in it. On one CPU the yield hands the CPU
// to the peer, which is what the sleep would have done. A reader that
// finds nothing in the window sleeps as before, so an idle channel costs
// spinFor of CPU once, not for as long as it is idle.
//
// fsbroker/fs BenchmarkReadThroughBroker decides it: on an idle VM the
// spin keeps a read through the broker near its floor where the sleep
// varies several-fold; on a loaded machine, whose CPUs do not halt, the
// two are alike.
const spinFor = 50 * time.Microsecond

// trySpin reads one record as recvRaw does if one comes within the spin
// window; ok is false when none came (and err is nil).
func (c *conn) trySpin() (r Record, fds []int, ok bool, err error) {
	deadline := time.Now().Add(spinFor)
	for {
		n, fds, err := c.recvmsg(unix.MSG_DONTWAIT)
		if err != unix.EAGAIN {
			r, fds, err := c.parse(n, fds, err)
			return r, fds, true, err
		}
		if time.Now().After(deadline) {
			return Record{}, nil, false, nil
		}
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

// recvSpun is recvRaw after a spin: it sleeps in recvmsg only when no
// record came within the window.
func (c *conn) recvSpun() (Record, []int, error) {
	if r, fds, ok, err := c.trySpin(); ok {
		return r, fds, err
	}
	return c.recvRaw()
}
