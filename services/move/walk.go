package move

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
)

// AsideOver is the size past which a file is copied aside to
// ~/Link/Agents/.sending before it is sent: a smaller one is read whole
// into memory, so either way what is sent is one reading, hashed as sent.
const AsideOver = 8 << 20

// ErrAreaLink stops a move: a link stands where an area's folder is.
var ErrAreaLink = errors.New("move: a link stands on the way to a folder the move sends, which is never followed")

// tree sends folders from their handles.
type tree struct {
	ctx     context.Context
	w       entryWriter
	sending int
	note    func(string)
}

// area sends ar from the agent's folder.
func (t *tree) area(agent int, ar area) error {
	fd, err := ownerfile.OpenDir(agent, ar.rel, unix.O_RDONLY)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil // nothing of it here
	case errors.Is(err, ownerfile.ErrLink):
		return fmt.Errorf("%w: %s", ErrAreaLink, ar.rel)
	case err != nil:
		return fmt.Errorf("opening %s: %w", ar.rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if err := t.w.Dir(ar.name, st.Mode&0o777); err != nil {
		return err
	}
	return t.dir(fd, ar.name, 0, ar.aside, ar.name == "home")
}

// dir sends what the folder fd holds as path's, depth folders below its
// area.
func (t *tree) dir(fd int, path string, depth int, aside, top bool) error {
	// Read from a duplicate: fd was opened for this reading alone.
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(d), path)
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := t.ctx.Err(); err != nil {
			return fmt.Errorf("the move was stopped: %w", err)
		}
		if top && n == ".env" {
			t.note("home/.env is not sent: a harness's keys go only as Link's settings")
			continue
		}
		if depth == 0 && path == "chats" && conversation.IsDeleting(n) {
			// A conversation's delete cut short: no conversation, never
			// carried (lnk agent start removes it).
			t.note("chats/" + n + " is not sent: it is what a conversation's delete cut short left, removed by the next lnk agent start")
			continue
		}
		if err := t.one(fd, n, path+"/"+n, depth, aside); err != nil {
			return err
		}
	}
	return nil
}

// one sends the name n of folder fd.
func (t *tree) one(fd int, n, path string, depth int, aside bool) error {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // gone meanwhile
		}
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return t.link(fd, n, path)
	case unix.S_IFDIR:
		if depth+1 > moveentry.MaxDepth {
			return fmt.Errorf("%w: %s: the move is refused", moveentry.ErrDepth, path)
		}
		sub, err := ownerfile.Open(fd, n, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if errors.Is(err, ownerfile.ErrLink) || errors.Is(err, unix.ENOTDIR) {
			return t.one(fd, n, path, depth, aside) // swapped meanwhile: sent as what it is now
		}
		if err != nil {
			return fmt.Errorf("opening %s: %w", path, err)
		}
		defer unix.Close(sub)
		if err := unix.Fstat(sub, &st); err != nil {
			return err
		}
		if err := t.w.Dir(path, st.Mode&0o777); err != nil {
			return err
		}
		return t.dir(sub, path, depth+1, aside, false)
	case unix.S_IFREG:
		return t.file(fd, n, path, aside)
	default:
		t.note(path + " is not sent: neither a file, a folder nor a link (a socket, a pipe or a device)")
		return nil
	}
}

func (t *tree) link(fd int, n, path string) error {
	buf := make([]byte, moveentry.MaxPath+1)
	k, err := unix.Readlinkat(fd, n, buf)
	if err != nil {
		return fmt.Errorf("reading the link %s: %w", path, err)
	}
	if k > moveentry.MaxPath {
		return fmt.Errorf("%w: the link %s", moveentry.ErrSize, path)
	}
	return t.w.Link(path, string(buf[:k]))
}

// file sends the regular file n of fd from what it opened: read whole
// when small, else (or when aside) copied to an unnamed file first.
func (t *tree) file(fd int, n, path string, aside bool) error {
	src, err := ownerfile.Open(fd, n, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, ownerfile.ErrLink) {
		return t.link(fd, n, path) // a link swapped in: sent as a link
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	f := os.NewFile(uintptr(src), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.note(path + " is not sent: it stopped being a regular file")
		return nil
	}
	mode := st.Mode & 0o777
	if !aside && st.Size <= AsideOver {
		// Read whole into memory: room for its size and one byte more,
		// which tells a file that grew meanwhile.
		buf := make([]byte, st.Size+1)
		k, err := io.ReadFull(f, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if k <= int(st.Size) {
			return t.w.File(path, mode, int64(k), bytes.NewReader(buf[:k]))
		}
		// It grew while read: aside, from what was read on.
		return t.aside(io.MultiReader(bytes.NewReader(buf[:k]), f), path, mode)
	}
	return t.aside(f, path, mode)
}

// aside copies r to an unnamed file in .sending and sends that copy.
func (t *tree) aside(r io.Reader, path string, mode uint32) error {
	tmp, err := ownerfile.TempFile(t.sending)
	if err != nil {
		return fmt.Errorf("copying %s aside: %w", path, err)
	}
	defer tmp.Close()
	k, err := io.Copy(tmp, r)
	if err != nil {
		return fmt.Errorf("copying %s aside: %w", path, err)
	}
	if asideCopied != nil {
		asideCopied(path)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return t.w.File(path, mode, k, bufio.NewReaderSize(tmp, copyBuf))
}

// asideCopied, when set (export_test.go), is told each path copied aside,
// once its copy is whole and before it is sent.
var asideCopied func(path string)
