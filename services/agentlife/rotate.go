package agentlife

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/logtail"
	"lnk.dev/lnk/internal/ownerfile"
)

// MaxLog bounds each of an agent's log files: past it the log is
// rotated, kept once as <name>.log.1 (the one before is replaced), and
// begun anew, so a harness printing without end holds at most twice this
// of the owner's disk.
const MaxLog = 16 << 20

// rotLog is a start's log, as the harness's output is copied to it: it
// writes at most MaxLog bytes to a file, then rotates (rotate).
type rotLog struct {
	mu    sync.Mutex
	dir   *os.File // the logs folder (O_PATH)
	name  string   // <name>, of <name>.log, .log.1 and .start
	f     *os.File
	start logtail.Start // where this start began, kept in <name>.start
	warn  func(string)  // where a failure to rotate is said, once
	stuck bool          // rotating failed: what comes is dropped
}

// Write appends p, rotating the log where it would pass MaxLog. A log
// that cannot be rotated keeps its bound: what passes it is dropped and
// the failure said once; the harness's output is never held up.
func (l *rotLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 && !l.stuck {
		st, err := l.f.Stat()
		if err != nil {
			l.fail(err)
			break
		}
		room := MaxLog - st.Size()
		if room <= 0 {
			if err := l.rotate(); err != nil {
				l.fail(err)
			}
			continue
		}
		k := min(room, int64(len(p)))
		w, err := l.f.Write(p[:k])
		if err != nil {
			l.fail(err)
			break
		}
		p = p[w:]
	}
	return n, nil
}

func (l *rotLog) fail(err error) {
	l.stuck = true
	if l.warn != nil {
		l.warn(fmt.Sprintf("lnk: the log %s/%s.log: %v; the harness's output past %d MiB is dropped until it starts again", l.dir.Name(), l.name, err, MaxLog>>20))
	}
}

// rotate renames <name>.log to <name>.log.1, atomically replacing the one
// before (a link there is replaced, never followed), opens a new
// <name>.log as openAppend does, and records in <name>.start where this
// start now begins. Only the file this writer holds is renamed: one the
// owner moved away or replaced is left as it is.
func (l *rotLog) rotate() error {
	dirfd := int(l.dir.Fd())
	renamed, err := rotateFile(dirfd, l.name, l.f)
	if err != nil {
		return err
	}
	f, err := openAppend(dirfd, l.dir.Name(), l.name+".log")
	if err != nil {
		return err
	}
	l.f.Close()
	l.f = f
	switch {
	case !renamed:
		// Not this start's file at the name: the start goes on from
		// the new file's end.
		st, err := f.Stat()
		if err != nil {
			return err
		}
		l.start = logtail.Start{Offset: st.Size()}
	case l.start.Prev:
		// Rotated again: the start's first lines are gone, and its
		// oldest kept are .log.1's first.
		l.start.Offset = 0
	default:
		// The start's first lines are in .log.1 now.
		l.start.Prev = true
	}
	return ownerfile.WriteAtomic(dirfd, l.name+".start", []byte(l.start.String()), ownerfile.Write{Mode: 0o600})
}

// rotateFile renames <name>.log, where it is still held's file, to
// <name>.log.1, and says whether it did.
func rotateFile(dirfd int, name string, held *os.File) (bool, error) {
	var at, fd unix.Stat_t
	if err := unix.Fstatat(dirfd, name+".log", &at, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return false, nil
		}
		return false, err
	}
	if err := unix.Fstat(int(held.Fd()), &fd); err != nil {
		return false, err
	}
	if at.Dev != fd.Dev || at.Ino != fd.Ino {
		return false, nil
	}
	return true, ownerfile.Rename(dirfd, name+".log", dirfd, name+".log.1", 0)
}

// Path is the log's path.
func (l *rotLog) Path() string { return l.dir.Name() + "/" + l.name + ".log" }

func (l *rotLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dir.Close()
	return l.f.Close()
}
