package connpass

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// listener is a TCP listener on 127.0.0.1, as the first stage makes it.
func listener(t *testing.T) int {
	fd, _ := testenv.LoopbackListener(t)
	return fd
}

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return p[0], p[1]
}

// The listener handed, with a pipe to hold, is served by the receiver:
// a client connecting to its address is accepted there, and the pipe's
// write end sees its reader still open after the sender's copy is closed.
func TestPassesTheRelayListenerAndWhatToHold(t *testing.T) {
	r, ch := channel(t)
	ln := listener(t)
	sa, _ := unix.Getsockname(ln)
	addr := sa.(*unix.SockaddrInet4)
	pr, pw := pipe(t)
	defer unix.Close(pw)
	raw, _ := ch.File()
	err := PassListener(int(raw.Fd()), ln, pr)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(ln)
	unix.Close(pr)
	l, held, err := r.ReceiveListener()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(held) != 1 {
		t.Fatalf("%d fds held, want the pipe", len(held))
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(addr.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("ok"))
	a.Close()
	if b, _ := io.ReadAll(c); string(b) != "ok" {
		t.Fatalf("the client read %q", b)
	}
	// The reader is held: a write to the pipe does not fail with EPIPE.
	if _, err := unix.Write(pw, []byte{1}); err != nil {
		t.Fatalf("the held pipe's reader is gone: %v", err)
	}
	held[0].Close()
	if _, err := unix.Write(pw, []byte{1}); !errors.Is(err, unix.EPIPE) {
		t.Fatalf("write after the held reader closed: %v, want EPIPE", err)
	}
}

// TestRefusesWhatIsNotTheRelayListener sends, raw, each message other
// than the relay's listener: each is refused with its reason, and every
// fd that came with it is closed.
func TestRefusesWhatIsNotTheRelayListener(t *testing.T) {
	sock := func(t *testing.T, domain, typ int, sa unix.Sockaddr, listen bool) int {
		fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if sa != nil {
			if err := unix.Bind(fd, sa); err != nil {
				t.Fatal(err)
			}
		}
		if listen {
			if err := unix.Listen(fd, 1); err != nil {
				t.Fatal(err)
			}
		}
		return fd
	}
	cases := []struct {
		name, reason, data string
		fds                func(t *testing.T) []int
	}{
		{"no fd", "0 fds", ListenerTag, func(*testing.T) []int { return nil }},
		{"other bytes", "does not hand", "GET / HTTP/1.1", func(t *testing.T) []int { return []int{listener(t)} }},
		{"a connection", "does not listen", ListenerTag, func(t *testing.T) []int {
			a, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			unix.Close(a[1])
			return a[:1]
		}},
		{"a unix listener", "no TCP socket", ListenerTag, func(t *testing.T) []int {
			return []int{sock(t, unix.AF_UNIX, unix.SOCK_STREAM, &unix.SockaddrUnix{Name: "@lnk-connpass-test-" + t.Name()}, true)}
		}},
		{"a listener on every address", "not on a loopback", ListenerTag, func(t *testing.T) []int {
			return []int{sock(t, unix.AF_INET, unix.SOCK_STREAM, &unix.SockaddrInet4{}, true)}
		}},
		{"a datagram socket", "not a stream", ListenerTag, func(t *testing.T) []int {
			return []int{sock(t, unix.AF_INET, unix.SOCK_DGRAM, nil, false)}
		}},
		{"a pipe", "not a socket", ListenerTag, func(t *testing.T) []int {
			r, w := pipe(t)
			unix.Close(w)
			return []int{r}
		}},
		{"a file to hold", "not a pipe", ListenerTag, func(t *testing.T) []int {
			fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return []int{listener(t), fd}
		}},
		{"two to hold", "3 fds", ListenerTag, func(t *testing.T) []int {
			r1, w1 := pipe(t)
			r2, w2 := pipe(t)
			unix.Close(w1)
			unix.Close(w2)
			return []int{listener(t), r1, r2}
		}},
		{"more fds than a message may carry", "cut short", ListenerTag, func(t *testing.T) []int {
			var fds []int
			for range maxFDs + 8 { // past the buffer, whatever its padding
				fd, _ := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				fds = append(fds, fd)
			}
			return fds
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ch := channel(t)
			before := openFDs(t)
			fds := c.fds(t)
			sendRaw(t, ch, []byte(c.data), fds)
			_, _, err := r.ReceiveListener()
			checkRefused(t, err, c.reason, before)
		})
	}
}

func TestNoListenerOnceTheSenderCloses(t *testing.T) {
	r, ch := channel(t)
	ch.Close()
	if _, _, err := r.ReceiveListener(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the sender's close: %v, want io.EOF", err)
	}
}
