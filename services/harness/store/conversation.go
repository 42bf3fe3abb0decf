package store

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// The names in a conversation's folder.
const (
	logName      = "events.jsonl"
	framesName   = "events.zst"
	readableName = "conversation.md"
)

// DefaultLockWait is how long [Chats.Open] waits for another writer by
// default.
const DefaultLockWait = 5 * time.Minute

// Options is how a conversation is kept.
type Options struct {
	Compact  bool                          // [storage] conversations = "compact": events.zst and the lines since
	LockWait time.Duration                 // how long Open waits for another writer's lock; 0 is DefaultLockWait
	Agent    string                        // the name conversation.md heads the agent's answers with; "" is "Agent"
	Logf     func(format string, a ...any) // where a torn line cut off, a readable copy not written, are said; nil: nowhere
}

// Conversation is one thread's log, open and locked for writing. Its
// methods may be called from several goroutines.
type Conversation struct {
	thread string
	o      Options

	mu       sync.Mutex // guards what follows
	dir      *os.File   // the thread's folder
	log      *os.File   // events.jsonl, O_APPEND, flock'd
	readable *os.File   // conversation.md, O_APPEND; nil when it could not be opened
	size     int64      // the log's length: every byte of it whole lines
	last     int64      // the last number written, in any of the three places
	framed   int64      // the last number in events.zst (0: none)
	closed   bool
}

// Open opens the conversation thread, making its folder (0700) and log
// (0600) when missing, and takes the writer lock on its log, waiting
// at most o.LockWait for another writer. It reads only the log's last
// line (and a compact chat's last frame, and the names of an older
// harness's files) to learn the last number; a torn last line is cut
// off (see the package doc).
func (c *Chats) Open(thread string, o Options) (*Conversation, error) {
	if err := CheckThread(thread); err != nil {
		return nil, fmt.Errorf("%w\nhint: a thread's name is letters, digits, -, _, ., one : and one ~", err)
	}
	if o.LockWait == 0 {
		o.LockWait = DefaultLockWait
	}
	if o.Agent == "" {
		o.Agent = "Agent"
	}
	fd, err := ownerdir.Below(int(c.dir.Fd()), []string{thread})
	if err != nil {
		return nil, fmt.Errorf("conversation %s: %w", thread, err)
	}
	v := &Conversation{thread: thread, o: o, dir: os.NewFile(uintptr(fd), thread)}
	if err := v.open(); err != nil {
		v.closeFiles()
		return nil, fmt.Errorf("conversation %s: %w", thread, err)
	}
	return v, nil
}

func (v *Conversation) open() error {
	lf, err := openPrivate(v.dirFd(), logName, unix.O_RDWR|unix.O_APPEND)
	if err != nil {
		return err
	}
	v.log = lf
	if err := lockWait(int(lf.Fd()), v.o.LockWait); err != nil {
		return err
	}
	if err := v.readTail(); err != nil {
		return err
	}
	if err := v.sweepTemporaries(); err != nil {
		return err
	}
	old, err := oldFiles(v.dirFd())
	if err != nil {
		return err
	}
	if len(old) > 0 && old[len(old)-1].seq > v.last {
		v.last = old[len(old)-1].seq
	}
	if err := v.readFramesTail(); err != nil {
		return err
	}
	return v.openReadable()
}

// openPrivate opens (or makes, 0600) name in dirfd with flags, never
// through a link and never waiting on a pipe, and refuses it unless it
// is a regular file of the owner's, 0600 or stricter, with one link.
func openPrivate(dirfd int, name string, flags int) (*os.File, error) {
	fd, err := ownerfile.Open(dirfd, name, flags|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", name, err)
	}
	if err := ownerfile.Check(fd, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// lockWait takes an exclusive flock on fd, trying again until wait has
// passed.
func lockWait(fd int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			return fmt.Errorf("locking %s: %w", logName, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another writer has held %s for over %v", logName, wait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func (v *Conversation) dirFd() int { return int(v.dir.Fd()) }

// sweepTemporaries removes what a writer cut short left in the folder
// (a new events.zst or conversation.md not yet renamed into place): with
// the lock held, no writer is making one.
func (v *Conversation) sweepTemporaries() error {
	ns, err := names(v.dirFd())
	if err != nil {
		return err
	}
	for _, n := range ns {
		if strings.HasPrefix(n, "."+framesName+".tmp-") || strings.HasPrefix(n, "."+readableName+".tmp-") {
			v.logf("removing %s, left by a writer cut short", n)
			if err := ownerfile.RemoveAll(v.dirFd(), n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (v *Conversation) logf(format string, a ...any) {
	if v.o.Logf != nil {
		v.o.Logf("conversation %s: "+format, append([]any{v.thread}, a...)...)
	}
}

// Thread is the conversation's name.
func (v *Conversation) Thread() string { return v.thread }

// Last is the last event's number (0 for a new conversation).
func (v *Conversation) Last() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last
}

// Close compacts a compact chat's log when it has grown, then releases
// the lock and every handle.
func (v *Conversation) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	var err error
	if v.o.Compact && v.size >= compactAt {
		err = v.compactLocked()
	}
	v.closed = true
	if cerr := v.closeFiles(); err == nil {
		err = cerr
	}
	return err
}

func (v *Conversation) closeFiles() error {
	var err error
	for _, f := range []*os.File{v.readable, v.log, v.dir} {
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	return err
}
