package stdpipe

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxSizeFile says the largest pipe an unprivileged process may ask for.
const maxSizeFile = "/proc/sys/fs/pipe-max-size"

// ErrNotPipe is Grow's answer for a socket: it has no pipe buffer.
var ErrNotPipe = errors.New("not a pipe")

// Grow asks the kernel to make the pipe's buffer size bytes, or the
// system's largest for an unprivileged process (pipe-max-size) if that
// is less, and says the size it has after (F_GETPIPE_SZ). A larger
// buffer lets a large message (a page's answer) go in one write, without
// waiting for the reader to drain the default 64 KiB. The kernel may
// refuse (the user's pipes already past pipe-user-pages-soft): the pipe
// is then as it was, and the error says why.
func (p *Pipe) Grow(size int) (int, error) {
	var st unix.Stat_t
	var got int
	var err error
	cerr := p.rc.Control(func(fd uintptr) {
		if err = unix.Fstat(int(fd), &st); err != nil {
			return
		}
		if st.Mode&unix.S_IFMT != unix.S_IFIFO {
			err = ErrNotPipe
			return
		}
		if max, merr := maxSize(); merr == nil && max < size {
			size = max
		}
		if _, err = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size); err != nil {
			err = &os.SyscallError{Syscall: "fcntl F_SETPIPE_SZ", Err: err}
			return
		}
		got, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	})
	if cerr != nil {
		return 0, os.ErrClosed
	}
	return got, err
}

// maxSize is pipe-max-size; where it cannot be read, the size asked is
// tried as it is (the kernel refuses it if it is too large).
func maxSize() (int, error) {
	b, err := os.ReadFile(maxSizeFile)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
