package hub

import (
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// MaxLog caps what a running hub keeps of its server's output.
const MaxLog = 1 << 20

// capLog is the hub's log: at most MaxLog bytes while it runs; what is
// written past that is dropped, once noted.
type capLog struct {
	mu      sync.Mutex
	f       *os.File
	n       int64
	dropped bool
}

// openLog keeps a log past MaxLog once as path.1, then starts path anew
// (0600, never through a link).
func openLog(path string) (*capLog, error) {
	dir, name := filepath.Split(path)
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size >= MaxLog {
		if err := ownerfile.Rename(dfd, name, dfd, name+".1", 0); err != nil {
			return nil, &os.PathError{Op: "rename", Path: path, Err: err}
		}
	}
	// O_NONBLOCK: a fifo put at the log's name must not hang the hub.
	fd, err := ownerfile.Open(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &capLog{f: f, n: fi.Size()}, nil
}

func (l *capLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	room := MaxLog - l.n
	if room <= 0 {
		if !l.dropped {
			l.dropped = true
		}
		return len(p), nil
	}
	w := p
	if int64(len(w)) > room {
		w = w[:room]
	}
	n, err := l.f.Write(w)
	l.n += int64(n)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Printf-free logging of the hub's own lines (refusals, start, stop).
func (l *capLog) line(s string) { l.Write([]byte("lnk-toolhub: " + s + "\n")) }

func (l *capLog) Close() error { return l.f.Close() }
