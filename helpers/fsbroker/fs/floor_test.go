package fs

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/brokerproc"
)

// The floors a read through the broker is set against: what passing an
// fd back from a peer costs at the least, with nothing of Link's in it.

// pingPong is a floor's caller end: each round trip sends a one-byte
// datagram and receives one carrying an fd, which it closes. Both ends
// make blocking sendmsg/recvmsg calls on a raw SOCK_SEQPACKET socket:
// no poller, no goroutine hand-off, a direct wake-up of the peer.
type pingPong struct{ a, b int }

// newPingPong answers from a thread of this process.
func newPingPong(tb testing.TB, path string) *pingPong {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	p := &pingPong{a: fds[0], b: fds[1]}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer unix.Close(fd)
		runtime.LockOSThread()
		answer(p.b, fd)
	}()
	tb.Cleanup(func() {
		unix.Shutdown(p.a, unix.SHUT_RDWR)
		<-done
		unix.Close(p.a)
		unix.Close(p.b)
	})
	return p
}

// answer answers each datagram on sock with one carrying fd, until the
// channel closes. A bare fd, not an *os.File: a file's finalizer would
// close it under the loop.
func answer(sock, fd int) {
	rights := unix.UnixRights(fd)
	one := make([]byte, 1)
	for {
		n, _, _, _, err := unix.Recvmsg(sock, one, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		for {
			err = unix.Sendmsg(sock, one, rights, nil, 0)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			return
		}
	}
}

var oneByte = []byte{1}

func (p *pingPong) roundTrip(tb testing.TB) {
	var oob [24]byte // CmsgSpace(4)
	var one [1]byte
	if err := unix.Sendmsg(p.a, oneByte, nil, nil, 0); err != nil {
		tb.Fatal(err)
	}
	_, oobn, _, _, err := unix.Recvmsg(p.a, one[:], oob[:], unix.MSG_CMSG_CLOEXEC)
	if err != nil || oobn != len(oob) {
		tb.Fatalf("floor: recvmsg: %v (%d bytes of control data)", err, oobn)
	}
	// One SCM_RIGHTS message with one fd: it sits after the 16-byte cmsghdr.
	fd := int(int32(uint32(oob[16]) | uint32(oob[17])<<8 | uint32(oob[18])<<16 | uint32(oob[19])<<24))
	unix.Close(fd)
}

const pongMarker = "LNK_FS_TEST_PONG"

// pong is the other process of the cross-process floor: on fd 3 it
// answers each datagram with one carrying the fd of path, from one
// locked thread. It keeps two Ps, as wire's server does, so the runtime
// never takes the P from the thread blocked in recvmsg.
func pong(path string) int {
	runtime.GOMAXPROCS(2)
	runtime.LockOSThread()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 2
	}
	answer(3, fd)
	return 0
}

// newPongProcess starts the cross-process floor's answering process.
func newPongProcess(tb testing.TB, path string) (*pingPong, int) {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := brokerproc.Start(brokerproc.Options{Path: exe, Env: []string{pongMarker + "=" + path}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		p.Kill()
		p.Chan.Close()
	})
	return &pingPong{a: int(p.Chan.Fd())}, p.Pid()
}

// lastCPU is the highest CPU this process may run on.
func lastCPU(tb testing.TB) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		tb.Fatal(err)
	}
	for cpu := 1023; cpu >= 0; cpu-- {
		if set.IsSet(cpu) {
			return cpu
		}
	}
	tb.Fatal("no CPU in this thread's affinity")
	return -1
}

// pin sets the affinity of every thread of pid to cpu (twice over, for
// a thread started meanwhile from one not yet pinned) and returns what
// gives every thread of pid, those started since too, the affinity pid
// had before.
func pin(tb testing.TB, pid, cpu int) (restore func()) {
	var was, one unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &was); err != nil {
		tb.Fatal(err)
	}
	one.Set(cpu)
	setAll(tb, pid, &one)
	return func() { setAll(tb, pid, &was) }
}

func setAll(tb testing.TB, pid int, set *unix.CPUSet) {
	for range 2 {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range ents {
			tid, _ := strconv.Atoi(e.Name())
			unix.SchedSetaffinity(tid, set) // a thread that exited meanwhile is no matter
		}
	}
}
