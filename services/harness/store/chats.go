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
