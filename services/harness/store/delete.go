package store

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/ownerfile"
)

// Errors of [Chats.Delete] (errors.Is).
var (
	// ErrNotKept: no conversation of that name is kept.
	ErrNotKept = errors.New("no such conversation")
	// ErrTurnRunning: a writer (a turn) holds the conversation's log.
	ErrTurnRunning = errors.New("a turn is running in it")
	// ErrQueued: messages wait in its inbox for a turn.
	ErrQueued = errors.New("messages from others wait in its inbox")
)

// deletingPrefix names a conversation being removed: moved aside in one
// rename first, so it is gone from chats/ at once (internal/conversation,
// the one name backups, moves and the agent's start leave out or remove).
const deletingPrefix = conversation.DeletingPrefix

// Delete removes conversation thread from chats/, never following a
// link: a link (or a file) in its place is removed as itself, what it
// points at untouched, and Delete reports it (link true). A folder is
// refused while a turn holds its log (the log's flock, tried without
// waiting) and, unless stopped (the agent's harness is not running, so
// nothing in its inbox will run), while its inbox holds a message
// waiting or can't be read. The lock is held through the removal: the
// folder is moved aside to a hidden name in one rename, then removed
// entry by entry ([ownerfile.RemoveAll]). What an earlier Delete cut
// short left aside is removed first.
func (c *Chats) Delete(thread string, stopped bool) (link bool, err error) {
	if err := CheckThread(thread); err != nil {
		return false, err
	}
	chats := int(c.dir.Fd())
	if err := c.SweepDeleting(); err != nil {
		return false, err
	}
	var st unix.Stat_t
	switch err := unix.Fstatat(chats, thread, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
		return false, fmt.Errorf("conversation %s: %w", thread, ErrNotKept)
	case err != nil:
		return false, fmt.Errorf("conversation %s: %w", thread, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		if err := ownerfile.RemoveAll(chats, thread); err != nil {
			return false, fmt.Errorf("chats/%s, not a folder: %w", thread, err)
		}
		return true, nil
	}
	dfd, err := ownerfile.OpenDir(chats, thread, unix.O_RDONLY)
	if err != nil {
		return false, fmt.Errorf("conversation %s: %w", thread, err)
	}
	defer unix.Close(dfd)
	unlock, err := lockForDelete(dfd)
	if err != nil {
		return false, fmt.Errorf("conversation %s: %w", thread, err)
	}
	defer unlock()
	if !stopped {
		p, err := c.Pending(thread)
		if err != nil {
			return false, fmt.Errorf("conversation %s: whether messages wait in its inbox can't be read: %w", thread, err)
		}
		if len(p) > 0 {
			return false, fmt.Errorf("conversation %s: %w (%d)", thread, ErrQueued, len(p))
		}
	}
	aside := deletingPrefix + thread
	if err := ownerfile.Rename(chats, thread, chats, aside, unix.RENAME_NOREPLACE); err != nil {
		return false, fmt.Errorf("conversation %s: moving it aside: %w", thread, err)
	}
	if err := ownerfile.SyncDir(chats); err != nil {
		return false, fmt.Errorf("conversation %s: %w", thread, err)
	}
	if err := ownerfile.RemoveAll(chats, aside); err != nil {
		return false, fmt.Errorf("conversation %s is gone from chats/, but removing its files (chats/%s) failed; the next delete tries again: %w", thread, aside, err)
	}
	return false, nil
}

// lockForDelete takes the log's flock without waiting, through a handle
// opened without following a link; a log missing or not a regular file
// (no writer can open it) needs none. It returns what lets the lock go.
func lockForDelete(dfd int) (func(), error) {
	fd, err := ownerfile.Open(dfd, logName, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, ownerfile.ErrLink) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", logName, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return func() {}, nil
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrTurnRunning
		}
		return nil, fmt.Errorf("locking %s: %w", logName, err)
	}
	return func() { unix.Close(fd) }, nil
}

// SweepDeleting removes what a Delete cut short left aside in chats/
// (.~deleting~*), never following a link: [Chats.Delete] before its own,
// lnk agent start at each start.
func (c *Chats) SweepDeleting() error {
	fd, err := ownerfile.OpenDir(int(c.dir.Fd()), ".", unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("listing chats: %w", err)
	}
	d := os.NewFile(uintptr(fd), "chats")
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("listing chats: %w", err)
	}
	for _, n := range names {
		if conversation.IsDeleting(n) {
			if err := ownerfile.RemoveAll(int(c.dir.Fd()), n); err != nil {
				return fmt.Errorf("removing chats/%s, a delete's leftover: %w", n, err)
			}
		}
	}
	return nil
}
