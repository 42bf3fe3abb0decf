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

// rotLog is the one bounded writer of an agent's log: a start's, as the
// harness's output (and the supervisor's lines while it is copied) is
// copied to it, or one of the supervisor's own lines outside a start
// (appendLine). It writes at most MaxLog bytes to a file, then rotates
// (rotate).
type rotLog struct {
	mu     sync.Mutex
	dir    *os.File // the logs folder (O_PATH)
	name   string   // <name>, of <name>.log, .log.1 and .start
	f      *os.File
	start  logtail.Start // where the last start began, kept in <name>.start
	record bool          // rotate keeps <name>.start (false: no start yet)
	// startErr, where the last start's record could not be read, refuses
	// a rotation (it would leave the record naming the wrong file).
	startErr error
	lines    bool         // the supervisor's lines outside a start (appendLine)
	warn     func(string) // where a failure to rotate is said, once
	stuck    bool         // rotating failed: what comes is dropped
	closed   bool
}

// Write appends p, rotating the log where it would pass MaxLog. A log
// that cannot be rotated keeps its bound: what passes it is dropped and
// the failure said once; the harness's output is never held up.
func (l *rotLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.write(p, l.lines)
	return len(p), nil
}

// WriteOpen writes the supervisor's line p as Write does, whole in one
// file (rotated first where it does not fit), and says true, unless the
// log is closed (its start's output ended): then it says false and
// writes nothing.
func (l *rotLog) WriteOpen(p []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.write(p, true)
	return true
}

// write is Write's, with mu held; whole keeps p (a line) in one file, but
// for one longer than MaxLog.
func (l *rotLog) write(p []byte, whole bool) {
	for len(p) > 0 && !l.stuck {
		st, err := l.f.Stat()
		if err != nil {
			l.fail(err)
			break
		}
		room := MaxLog - st.Size()
		if room <= 0 || whole && room < int64(len(p)) && st.Size() > 0 {
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
}

func (l *rotLog) fail(err error) {
	l.stuck = true
	drops := fmt.Sprintf("the harness's output past %d MiB is dropped until it starts again", MaxLog>>20)
	if l.lines {
		drops = fmt.Sprintf("the supervisor's line past %d MiB is dropped", MaxLog>>20)
	}
	if l.warn != nil {
		l.warn(fmt.Sprintf("lnk: the log %s/%s.log: %v; %s", l.dir.Name(), l.name, err, drops))
	}
}

// rotate renames <name>.log to <name>.log.1, atomically replacing the one
// before (a link there is replaced, never followed), opens a new
// <name>.log as openAppend does, and records in <name>.start where this
// start now begins. Only the file this writer holds is renamed: one the
// owner moved away or replaced is left as it is.
func (l *rotLog) rotate() error {
	if l.startErr != nil {
		return fmt.Errorf("not rotated, the last start's record unread: %w", l.startErr)
	}
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
	case !l.record || !renamed && l.lines:
		// No start recorded, or the file held was not the log (moved
		// away meanwhile) and the start's lines are wherever it is:
		// the record is left as it is.
		return nil
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
	l.closed = true
	l.dir.Close()
	return l.f.Close()
}
