package webhook

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// SeenLogName is the log of the ids taken since hooks-seen.json was last
// written whole: one line per id, appended a group of posts at a time.
const SeenLogName = "hooks-seen.log"

// seenRule is what both files of the record must be: the owner's, 600,
// one link.
var seenRule = ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}

// seenLog is hooks-seen.log held open (O_APPEND, never through a link):
// a group of posts is one write(2) of their lines and one fdatasync, the
// whole record being written only when the log has grown as large as it
// (seen.compact). A line is an entry of hooks-seen.json's object,
// `"<hook id> <post id>":"<when taken>"`, so both files hold an id in
// the same bytes and are bounded by one count.
type seenLog struct {
	dirfd    int
	f        *os.File
	dev, ino uint64
	size     int64 // its bytes: what was read when opened, then appended
}

// openSeenLog opens hooks-seen.log in dirfd, making it (600) when
// missing: never through a link, never blocking on a fifo, refused
// unless it is the owner's, 600 or stricter, with one link.
func openSeenLog(dirfd int) (*seenLog, error) {
	fd, err := ownerfile.Open(dirfd, SeenLogName, unix.O_RDWR|unix.O_APPEND|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", SeenLogName, err)
	}
	var st unix.Stat_t
	err = ownerfile.Check(fd, seenRule)
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", SeenLogName, err)
	}
	return &seenLog{dirfd: dirfd, f: os.NewFile(uintptr(fd), SeenLogName), dev: st.Dev, ino: st.Ino, size: st.Size}, nil
}

// read is the log's whole text, refused past max bytes.
func (l *seenLog) read(max int64) ([]byte, error) {
	data, err := io.ReadAll(io.NewSectionReader(l.f, 0, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", SeenLogName, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", SeenLogName, max)
	}
	l.size = int64(len(data))
	return data, nil
}

// append writes lines at the log's end in one write and makes them
// durable (fdatasync), then checks that the log is still the file at its
// name: one put in its place, or linked elsewhere, would hold them where
// the next listener never reads.
func (l *seenLog) append(lines []byte) error {
	n, err := l.f.Write(lines)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("writing %s: %w", SeenLogName, err)
	}
	if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
		return fmt.Errorf("writing %s: %w", SeenLogName, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(l.dirfd, SeenLogName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s is gone from its folder: %w", SeenLogName, err)
	}
	if st.Dev != l.dev || st.Ino != l.ino || st.Nlink != 1 {
		return errors.New(SeenLogName + " was replaced or linked while the listener held it")
	}
	return nil
}

// empty truncates the log, durably: the record written whole holds all
// it held.
func (l *seenLog) empty() error {
	if err := unix.Ftruncate(int(l.f.Fd()), 0); err != nil {
		return fmt.Errorf("emptying %s: %w", SeenLogName, err)
	}
	if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
		return fmt.Errorf("emptying %s: %w", SeenLogName, err)
	}
	l.size = 0
	return nil
}

func (l *seenLog) close() error { return l.f.Close() }
