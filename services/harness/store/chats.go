package store

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// Chats is an agent's chats/ folder, held open: every conversation is
// opened from this handle, never from a path.
type Chats struct {
	dir     *os.File
	inboxMu sync.Mutex // one inbox change at a time in this process (flock keeps others')
}

// OpenChats opens chats/ in the agent's Agent/ folder (its handle, which
// the caller keeps), making it 0700 when missing, never through a link,
// and refusing one that is another user's or that others can enter.
func OpenChats(agentDir *os.File) (*Chats, error) {
	fd, err := ownerdir.Below(int(agentDir.Fd()), []string{"chats"})
	if err != nil {
		return nil, fmt.Errorf("the agent's chats: %w", err)
	}
	return &Chats{dir: os.NewFile(uintptr(fd), "chats")}, nil
}

// List returns the names of the conversations in chats/, sorted: each
// folder whose name [CheckThread] takes (anything else is not a
// conversation of this store's and is left out).
func (c *Chats) List() ([]string, error) {
	fd, err := ownerfile.OpenDir(int(c.dir.Fd()), ".", unix.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("listing chats: %w", err)
	}
	d := os.NewFile(uintptr(fd), "chats")
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing chats: %w", err)
	}
	var out []string
	for _, n := range names {
		if CheckThread(n) != nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return nil, fmt.Errorf("listing chats: %s: %w", n, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Close closes the chats/ folder's handle; open conversations keep their
// own.
func (c *Chats) Close() error { return c.dir.Close() }

// Has reports whether conversation thread is kept: a folder of that name
// in chats/, looked at without following a link. A name [CheckThread]
// refuses, a link or anything else there, and what can't be looked at
// are errors, never "not kept" (the caller refuses on either).
func (c *Chats) Has(thread string) (bool, error) {
	if err := CheckThread(thread); err != nil {
		return false, err
	}
	var st unix.Stat_t
	err := unix.Fstatat(int(c.dir.Fd()), thread, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("conversation %s: %w", thread, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return false, fmt.Errorf("conversation %s: chats/%s is not a folder", thread, thread)
	}
	return true, nil
}
