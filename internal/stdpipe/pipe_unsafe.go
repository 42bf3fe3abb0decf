package stdpipe

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Pipe is one end of a pipe or socket read and written without entering
// the Go runtime's system call path: the fd is non-blocking and waited
// on in the poller, and each read or write is a raw system call that
// cannot block. A blocking read holds a thread that the runtime's monitor
// polls to take its P back, and every system call entered while the
// program is idle wakes that monitor: most of a call's cost besides its
// own work, on a machine where a context switch is dear.
//
// Measured against what internal/wire does (a blocking read(2), the
// reader locked to its thread) with BenchmarkRead4KiB A/B: latency alike,
// but the blocking reader cost more context switches a call, because the
// monitor takes the P from each blocked reader and the next system call
// wakes it. A spin before sleeping on the answer (internal/wire/spin.go)
// added CPU and caught too few answers: apply takes longer than the
// window. Through the poller each wait is one sleep already, so nothing
// is handed from thread to thread.
type Pipe struct {
	f  *os.File
	rc syscall.RawConn
}

// ForChild makes a pipe for a child: the child's end (its stdin where
// childReads, else its stdout) stays blocking, as a program expects; this
// process's end is a [Pipe]. The two ends are separate open files, so
// one's O_NONBLOCK is not the other's.
func ForChild(childReads bool) (child *os.File, parent *Pipe, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	c, p := fds[1], fds[0]
	if childReads {
		c, p = fds[0], fds[1]
	}
	if err := unix.SetNonblock(p, true); err != nil {
		unix.Close(c)
		unix.Close(p)
		return nil, nil, err
	}
	pf := os.NewFile(uintptr(p), "pipe") // non-blocking: pollable
	rc, err := pf.SyscallConn()
	if err != nil {
		unix.Close(c)
		pf.Close()
		return nil, nil, err
	}
	return os.NewFile(uintptr(c), "pipe"), &Pipe{f: pf, rc: rc}, nil
}

// Std is f (os.Stdin or os.Stdout) as a [Pipe] where it is a pipe or
// a socket, and f itself where it is not (a terminal, a file). It sets
// the open file non-blocking, which whoever shares it sees too (the
// process at a pipe's other end has an open file of its own). f must
// stay referenced (as os.Stdin is) and unused after: the Pipe holds the
// same fd.
func Std(f *os.File) io.ReadWriteCloser {
	var st unix.Stat_t
	fd := int(f.Fd())
	if err := unix.Fstat(fd, &st); err != nil {
		return f
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return f
	}
	if unix.SetNonblock(fd, true) != nil {
		return f
	}
	nf := os.NewFile(uintptr(fd), f.Name()) // non-blocking now: pollable
	rc, err := nf.SyscallConn()
	if err != nil {
		return f
	}
	return &Pipe{f: nf, rc: rc}
}

func (p *Pipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, os.ErrClosed // the only way the poller fails a wait here
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (p *Pipe) Write(b []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := p.rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done))
			switch e {
			case 0:
				done += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // full: wait in the poller
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err != nil {
		err = os.ErrClosed
	} else if errno != 0 {
		err = errno
	}
	if err == nil && done < len(b) {
		err = io.ErrShortWrite
	}
	return done, err
}

// Close closes the fd; a read or write waiting in the poller returns.
func (p *Pipe) Close() error {
	err := p.f.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
