package askbroker

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// codeLetters are the letters a terminal code is made of: no i, l or o,
// which read as digits.
const codeLetters = "abcdefghjkmnpqrstuvwxyz"

// newCode is four random letters.
func newCode() string {
	var b [4]byte
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(codeLetters))))
		if err != nil {
			panic("askbroker: no randomness: " + err.Error())
		}
		b[i] = codeLetters[n.Int64()]
	}
	return string(b[:])
}

// ErrTerminalGone is a terminal that hung up or failed: it answers nothing.
var ErrTerminalGone = errors.New("the terminal is gone")

// A Terminal asks on the proxy's controlling terminal: it shows the
// question with a random code of four letters, and only that code typed
// back allows the call; anything else refuses it. One question at a time.
type Terminal struct {
	fd   int
	turn chan struct{} // one question on the terminal at a time
}

// NewTerminal asks on f, which must be a terminal. It keeps its own
// duplicate of f's descriptor.
func NewTerminal(f *os.File) (*Terminal, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("not a terminal: %w", err)
	}
	return &Terminal{fd: fd, turn: make(chan struct{}, 1)}, nil
}

// Close lets the terminal go, once the question on it (if any) has ended
// and said so.
func (t *Terminal) Close() error {
	t.turn <- struct{}{}
	return unix.Close(t.fd)
}

// Way names the terminal in answers and logs.
func (t *Terminal) Way() string { return "terminal" }

func (t *Terminal) write(s string) error {
	b := []byte(strings.ReplaceAll(s, "\n", "\r\n"))
	for len(b) > 0 {
		n, err := unix.Write(t.fd, b)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrTerminalGone, err)
		}
		b = b[n:]
	}
	return nil
}

// Ask shows a's question and reads one line back. It returns when the
// owner answers, or when ctx ends (the question answered another way, or
// its time up). Either way, once ctx ends — the broker ends it with the
// final decision as its cause — it says on the terminal how the question
// ended, before the next question may show.
func (t *Terminal) Ask(ctx context.Context, a *Asked) (bool, error) {
	// A free terminal is taken even when ctx has just ended, so a question
	// that reached the terminal always shows there, and how it ended too.
	select {
	case t.turn <- struct{}{}:
	default:
		select {
		case t.turn <- struct{}{}:
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
	}
	tell := func() {
		<-ctx.Done()
		t.write(fmt.Sprintf("\n[lnk question %s: %v]\n", a.ID, context.Cause(ctx)))
		<-t.turn
	}
	// What was typed before the question showed answers nothing.
	unix.IoctlSetInt(t.fd, unix.TCFLSH, unix.TCIFLUSH)
	if err := t.write(fmt.Sprintf("\n[lnk question %s]\n%s\nType %s to allow it once; anything else refuses it: ", a.ID, a.Question.Text(), a.Code)); err != nil {
		<-t.turn
		return false, err
	}
	line, err := t.readLine(ctx)
	go tell()
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(strings.TrimSpace(line))), []byte(a.Code)) == 1, nil
}

// readLine reads up to a newline, giving up when ctx ends.
func (t *Terminal) readLine(ctx context.Context) (string, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return "", err
	}
	defer unix.Close(p[0])
	// The wake-up closes its end itself once it has written, unless
	// stopped before it ran; so the fd is never closed while in use.
	stop := context.AfterFunc(ctx, func() {
		unix.Write(p[1], []byte{0})
		unix.Close(p[1])
	})
	defer func() {
		if stop() {
			unix.Close(p[1])
		}
	}()
	var line []byte
	buf := make([]byte, 256)
	for {
		fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return "", err
		}
		if fds[1].Revents != 0 {
			return "", context.Cause(ctx)
		}
		if fds[0].Revents&unix.POLLIN == 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return "", ErrTerminalGone
		}
		n, err := unix.Read(t.fd, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil || n == 0 {
			return "", ErrTerminalGone
		}
		for _, c := range buf[:n] {
			if c == '\n' || c == '\r' {
				return string(line), nil
			}
			if len(line) < 64 {
				line = append(line, c)
			}
		}
	}
}
