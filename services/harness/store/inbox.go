package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// The inbox's bounds: a message queued past either is refused
// ([ErrInboxFull]), never dropped.
const (
	// MaxQueuedMessages is how many messages a conversation's inbox
	// holds not yet run.
	MaxQueuedMessages = 16
	// MaxInbox is the inbox file's length, bytes: a message that would
	// take it past this is refused.
	MaxInbox = 16 << 20
	// MaxQueuedText is a queued message's text, bytes (a webhook's body
	// cap, the endpoint's largest message from others).
	MaxQueuedText = 1 << 20
	// maxInboxLine is one line: the text JSON-escaped at worst (\u00XX,
	// six bytes a byte) and the rest.
	maxInboxLine = 6*MaxQueuedText + 64<<10
	// maxInboxLines bounds the messages one inbox file may name, done or
	// not, before it is emptied (it is, whenever nothing is left to run).
	maxInboxLines = 4096
)

const inboxName = "inbox.jsonl"

// ErrInboxFull is a message refused because its conversation's inbox
// holds its most already.
var ErrInboxFull = errors.New("the conversation's inbox is full")

// Queue keeps q in thread's inbox (Agent/chats/<thread>/inbox.jsonl)
// for a turn after the one running, and returns its number. It returns
// only once the line is on the disk (fdatasync): a message it took
// survives a crash, a power cut too. Past MaxQueuedMessages not yet run,
// or past MaxInbox bytes, it refuses with ErrInboxFull.
func (c *Chats) Queue(thread string, q Queued) (int64, error) {
	if err := CheckThread(thread); err != nil {
		return 0, err
	}
	id, err := newQueuedID()
	if err != nil {
		return 0, err
	}
	q.ID = id
	if err := q.check(); err != nil {
		return 0, err
	}
	line, err := json.Marshal(q)
	if err != nil {
		return 0, err
	}
	line = append(line, '\n')
	c.inboxMu.Lock()
	defer c.inboxMu.Unlock()
	f, pending, whole, err := c.openInbox(thread, true)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	switch {
	case len(pending) >= MaxQueuedMessages:
		return 0, fmt.Errorf("%w: %d messages wait in conversation %s's inbox, the most it keeps", ErrInboxFull, len(pending), thread)
	case whole+len(line) > MaxInbox:
		return 0, fmt.Errorf("%w: conversation %s's inbox would pass %d bytes", ErrInboxFull, thread, MaxInbox)
	}
	if err := appendSynced(f, whole, line); err != nil {
		return 0, fmt.Errorf("conversation %s's inbox: %w", thread, err)
	}
	if whole == 0 {
		// A new file's name must be on the disk as well as its line.
		if err := c.syncThread(thread); err != nil {
			return 0, fmt.Errorf("conversation %s's inbox: %w", thread, err)
		}
	}
	return id, nil
}

// Pending is thread's queued messages not yet run, in the order they
// came; none when it has no inbox.
func (c *Chats) Pending(thread string) ([]Queued, error) {
	if err := CheckThread(thread); err != nil {
		return nil, err
	}
	c.inboxMu.Lock()
	defer c.inboxMu.Unlock()
	f, pending, _, err := c.openInbox(thread, false)
	if f != nil {
		f.Close()
	}
	return pending, err
}

// Done marks queued message id of thread run, on the disk (fdatasync)
// before it returns; once none is left to run the inbox is emptied.
func (c *Chats) Done(thread string, id int64) error {
	if err := CheckThread(thread); err != nil {
		return err
	}
	c.inboxMu.Lock()
	defer c.inboxMu.Unlock()
	f, pending, whole, err := c.openInbox(thread, false)
	if err != nil {
		return err
	}
	if f == nil {
		return fmt.Errorf("conversation %s has no inbox to mark message %d done in", thread, id)
	}
	defer f.Close()
	left, found := 0, false
	for _, q := range pending {
		if q.ID == id {
			found = true
		} else {
			left++
		}
	}
	if !found {
		return fmt.Errorf("conversation %s's inbox has no message %d waiting", thread, id)
	}
	line, _ := json.Marshal(doneMark{Done: id})
	if err := appendSynced(f, whole, append(line, '\n')); err != nil {
		return fmt.Errorf("conversation %s's inbox: %w", thread, err)
	}
	if left == 0 {
		if err := unix.Ftruncate(int(f.Fd()), 0); err != nil {
			return fmt.Errorf("emptying conversation %s's inbox: %w", thread, err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return fmt.Errorf("emptying conversation %s's inbox: %w", thread, err)
		}
	}
	return nil
}

// openInbox opens thread's inbox (making it when make is set; else a
// missing one is nil and no error), locked against another process, and
// reads it whole. A torn last line (a queueing cut short, never
// answered) is cut off through the handle.
func (c *Chats) openInbox(thread string, make bool) (*os.File, []Queued, int, error) {
	var dfd int
	var err error
	if make {
		dfd, err = ownerdir.Below(int(c.dir.Fd()), []string{thread})
	} else {
		dfd, err = ownerfile.OpenDir(int(c.dir.Fd()), thread, unix.O_RDONLY)
		if errors.Is(err, unix.ENOENT) {
			return nil, nil, 0, nil
		}
		if err == nil {
			if err = ownerfile.Check(dfd, ownerfile.PrivateDir); err != nil {
				unix.Close(dfd)
			}
		}
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("conversation %s: %w", thread, err)
	}
	defer unix.Close(dfd)
	var f *os.File
	if make {
		f, err = openPrivate(dfd, inboxName, unix.O_RDWR|unix.O_APPEND)
	} else {
		var fd int
		fd, err = ownerfile.Open(dfd, inboxName, unix.O_RDWR|unix.O_APPEND|unix.O_NONBLOCK, 0)
		if errors.Is(err, unix.ENOENT) {
			return nil, nil, 0, nil
		}
		if err == nil {
			err = ownerfile.Check(fd, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true})
			if err == nil {
				err = unix.SetNonblock(fd, false)
			}
			if err != nil {
				unix.Close(fd)
			} else {
				f = os.NewFile(uintptr(fd), inboxName)
			}
		}
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("conversation %s: %w", thread, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, nil, 0, fmt.Errorf("conversation %s: locking %s: %w", thread, inboxName, err)
	}
	data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, MaxInbox+maxInboxLine+1), MaxInbox+maxInboxLine+1))
	if err == nil {
		var whole int
		var pending []Queued
		pending, whole, err = ParseInbox(data)
		if err == nil {
			if whole < len(data) {
				if err = unix.Ftruncate(int(f.Fd()), int64(whole)); err == nil {
					err = unix.Fdatasync(int(f.Fd()))
				}
			}
			if err == nil {
				return f, pending, whole, nil
			}
		}
	}
	f.Close()
	return nil, nil, 0, fmt.Errorf("conversation %s: %w", thread, err)
}

// appendSynced adds line at the end of the inbox's whole lines in one
// write(2) and fdatasyncs it; a write cut short is cut off again.
func appendSynced(f *os.File, whole int, line []byte) error {
	n, err := unix.Write(int(f.Fd()), line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = unix.Fdatasync(int(f.Fd()))
	}
	if err != nil {
		if terr := unix.Ftruncate(int(f.Fd()), int64(whole)); terr != nil {
			return fmt.Errorf("writing %s: %w, and cutting the part written off: %w", inboxName, err, terr)
		}
		return fmt.Errorf("writing %s: %w", inboxName, err)
	}
	return nil
}

// syncThread fsyncs thread's folder and chats/, so a new inbox's name is
// kept.
func (c *Chats) syncThread(thread string) error {
	dfd, err := ownerfile.OpenDir(int(c.dir.Fd()), thread, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Fsync(dfd); err != nil {
		return err
	}
	return ownerfile.SyncDir(int(c.dir.Fd()))
}

// newQueuedID is a random number above 0: unique across the inbox's
// lifetimes, so an event's Queued names one message only.
func newQueuedID() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(b[:])>>1) | 1, nil
}
