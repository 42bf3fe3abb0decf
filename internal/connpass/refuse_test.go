package connpass

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openFDs counts this process's open fds.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestRefusesWhatIsNotOneConnection sends, raw, each message a sender
// that is not the proxy might: the receiver refuses each with its reason,
// closes every fd that came with it, and takes the next good one.
func TestRefusesWhatIsNotOneConnection(t *testing.T) {
	socket := func(domain, typ int) func(t *testing.T) []int {
		return func(t *testing.T) []int {
			fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return []int{fd}
		}
	}
	cases := []struct {
		name, reason string
		fds          func(t *testing.T) []int
		head         int
	}{
		{"no fd", "0 fds", func(*testing.T) []int { return nil }, 10},
		{"two connections", "2 fds", func(t *testing.T) []int {
			a, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			return a[:]
		}, 0},
		{"a pipe", "not a socket", func(t *testing.T) []int {
			var p [2]int
			unix.Pipe2(p[:], unix.O_CLOEXEC)
			unix.Close(p[1])
			return p[:1]
		}, 0},
		{"a file", "not a socket", func(t *testing.T) []int {
			fd, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return []int{fd}
		}, 0},
		{"a datagram socket", "not a stream", socket(unix.AF_INET, unix.SOCK_DGRAM), 0},
		{"a seqpacket socket", "not a stream", socket(unix.AF_UNIX, unix.SOCK_SEQPACKET), 0},
		{"an unconnected stream socket", "not connected", socket(unix.AF_INET, unix.SOCK_STREAM), 0},
		{"a listening socket", "listens", func(t *testing.T) []int {
			fd, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
			if err := unix.Listen(fd, 1); err != nil {
				t.Fatal(err)
			}
			return []int{fd}
		}, 0},
		{"a head over the cap", "bytes with the connection", func(t *testing.T) []int {
			a, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			unix.Close(a[1])
			return a[:1]
		}, MaxHead + 1},
		{"more fds than a message may carry", "cut short", func(t *testing.T) []int {
			var fds []int
			for range maxFDs + 8 { // past the buffer, whatever its padding
				fd, _ := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				fds = append(fds, fd)
			}
			return fds
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ch := channel(t)
			before := openFDs(t)
			fds := c.fds(t)
			sendRaw(t, ch, make([]byte, c.head), fds)
			_, err := r.Receive()
			checkRefused(t, err, c.reason, before)
			// The channel is still good.
			_, accepted := unixPair(t)
			Send(ch, accepted, []byte("x"))
			got, err := r.Receive()
			if err != nil {
				t.Fatalf("the next good message: %v", err)
			}
			got.Close()
		})
	}
}

// sendRaw sends data and fds on ch as one message, then closes the
// sender's copies of fds.
func sendRaw(t *testing.T, ch *net.UnixConn, data []byte, fds []int) {
	t.Helper()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if _, _, err := ch.WriteMsgUnix(data, oob, nil); err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// checkRefused fails t unless err is a *Refusal saying reason, and as
// many fds are open as before the message came.
func checkRefused(t *testing.T, err error, reason string, before int) {
	t.Helper()
	var ref *Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("taken: %v, want a refusal", err)
	}
	if !strings.Contains(ref.Reason, reason) {
		t.Errorf("reason %q, want it to say %q", ref.Reason, reason)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d fds open after the refusal, %d before: one that came with it was kept", after, before)
	}
}

func TestChannelMustBeSeqpacket(t *testing.T) {
	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	f := os.NewFile(uintptr(fds[0]), "stream")
	defer f.Close()
	unix.Close(fds[1])
	if _, err := Channel(f); err == nil {
		t.Fatal("a stream socket taken as a channel")
	}
}
