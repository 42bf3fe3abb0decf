package secret

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// MaxRead is the largest value Read takes.
const MaxRead = 64 << 10

// ErrEmpty and ErrTooLong are Read's refusals.
var (
	ErrEmpty   = errors.New("no value given")
	ErrTooLong = errors.New("a value is at most 64 KiB")
)

// Read takes a secret value from f: from a terminal, one line typed with
// echo off after prompt (written to promptTo); from anything else (a pipe,
// a file), all of it, less one trailing newline. The value never passes
// through a string, and the read buffer is zeroed.
func Read(f *os.File, promptTo io.Writer, prompt string) (*Value, error) {
	fd := int(f.Fd())
	buf := make([]byte, MaxRead+1)
	defer clear(buf)
	var n int
	var err error
	if old, terr := unix.IoctlGetTermios(fd, unix.TCGETS); terr == nil {
		n, err = readNoEcho(f, fd, old, buf, promptTo, prompt)
	} else {
		n, err = io.ReadFull(f, buf)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the value: %w", err)
	}
	if n > MaxRead {
		return nil, ErrTooLong
	}
	v := buf[:n]
	if len(v) > 0 && v[len(v)-1] == '\n' {
		v = v[:len(v)-1]
	}
	if len(v) > 0 && v[len(v)-1] == '\r' {
		v = v[:len(v)-1]
	}
	if len(v) == 0 {
		return nil, ErrEmpty
	}
	return New(v)
}

// readNoEcho reads one line from a terminal with echo off, restoring the
// terminal's settings after.
func readNoEcho(f *os.File, fd int, old *unix.Termios, buf []byte, promptTo io.Writer, prompt string) (int, error) {
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ECHONL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return 0, err
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	fmt.Fprint(promptTo, prompt)
	n := 0
	for n < len(buf) {
		k, err := f.Read(buf[n : n+1])
		n += k
		if k == 1 && buf[n-1] == '\n' {
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
