package audit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Options cap the log. The zero value means 16 MiB per file, 3 old files.
type Options struct {
	MaxBytes int64 // a file is rotated before it would pass this size
	Keep     int   // how many rotated files (audit.log.1 … .Keep) are kept
}

// Log appends entries to the audit log. It is safe for concurrent use.
type Log struct {
	dir  *os.File // the log's folder, O_PATH; held, never reopened by path
	opts Options

	mu   sync.Mutex // guards f and size
	f    *os.File
	size int64
}

// Open opens (creating it 0600) the audit log in dir, a handle from
// [OpenDir]. It refuses a log that is a link or not a regular file of
// this uid with mode 0600 and one link. Log takes ownership of dir.
func Open(dir *os.File, opts Options) (*Log, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 16 << 20
	}
	if opts.Keep <= 0 {
		opts.Keep = 3
	}
	l := &Log{dir: dir, opts: opts}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) open() error {
	f, err := openFileAt(l.dir, FileName, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Write appends e as one line. A line past the cap rotates the log first.
func (l *Log) Write(e Entry) error {
	b, err := e.line()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("audit log is closed")
	}
	if l.size > 0 && l.size+int64(len(b)) > l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			return fmt.Errorf("rotate audit log: %w", err)
		}
	}
	n, err := l.f.Write(b)
	l.size += int64(n)
	return err
}

// rotate renames audit.log to audit.log.1 (and each .k to .k+1, dropping
// the oldest) inside the held folder, then opens a new audit.log.
// Preconditions: l.mu is held.
func (l *Log) rotate() error {
	dfd := int(l.dir.Fd())
	old := func(k int) string { return FileName + "." + strconv.Itoa(k) }
	if err := unix.Unlinkat(dfd, old(l.opts.Keep), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	for k := l.opts.Keep - 1; k >= 1; k-- {
		if err := ownerfile.Rename(dfd, old(k), dfd, old(k+1), 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
	l.f.Sync()
	l.f.Close()
	l.f = nil
	if err := ownerfile.Rename(dfd, FileName, dfd, old(1), 0); err != nil {
		return err
	}
	if err := l.open(); err != nil {
		return err
	}
	// The renames are durable only once the folder is synced; a failure
	// is the caller's to see, as every other step's is.
	return ownerfile.SyncDir(dfd)
}

// Close syncs and closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.f != nil {
		l.f.Sync()
		err = l.f.Close()
		l.f = nil
	}
	l.dir.Close()
	return err
}
