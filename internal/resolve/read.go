package resolve

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readFlags open a file for reading so that nothing can block or take
// over the caller: O_NONBLOCK makes a FIFO's open return at once (and a
// read of it EAGAIN), O_NOCTTY keeps a terminal from becoming the
// process's. The file is then checked with fstat and refused unless it is
// regular; see the package doc, "Why one open, not O_PATH and a reopen".
const readFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY

// openRegular opens name for reading and refuses anything but a regular
// file. It returns the descriptor and its fstat. raw makes its system
// calls raw ([Root.ReadFileRaw] only).
func (r *Root) openRegular(op, name string, st *unix.Stat_t, raw bool) (int, error) {
	fd, err := r.resolveRaw(op, name, readFlags, raw)
	if err != nil {
		return -1, err
	}
	if err := fstat(fd, st, raw); err != nil {
		closeFd(fd, raw)
		return -1, fail(op, name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		closeFd(fd, raw)
		return -1, refuse(op, name, ErrNotRegular)
	}
	return fd, nil
}

// Open opens the regular file name for reading and returns it with its
// [Version]. A file larger than max bytes by fstat is refused
// (ErrTooLarge); max <= 0 means no cap. The cap is on the size seen at
// open: a reader of the returned file that needs a hard cap must stop at
// max bytes itself (the file may grow), as [Root.ReadFile] does.
func (r *Root) Open(name string, max int64) (*os.File, Version, error) {
	fd, v, err := r.OpenFd(name, max)
	if err != nil {
		return nil, Version{}, err
	}
	if err := clearNonblock(fd); err != nil {
		unix.Close(fd)
		return nil, Version{}, fail("open", name, err)
	}
	return os.NewFile(uintptr(fd), name), v, nil
}

// OpenFd is [Root.Open] returning the bare descriptor, which the caller
// owns and must close: what the broker hands on over SCM_RIGHTS, without
// an *os.File's cost. It is O_RDONLY|O_CLOEXEC and still carries the
// O_NONBLOCK it was opened with, which a regular file ignores; one fcntl
// is saved on the hot path, and a receiver that wants it off calls
// fcntl(F_SETFL, 0) (Open does).
func (r *Root) OpenFd(name string, max int64) (int, Version, error) {
	var st unix.Stat_t
	fd, err := r.openRegular("open", name, &st, false)
	if err != nil {
		return -1, Version{}, err
	}
	if max > 0 && st.Size > max {
		unix.Close(fd)
		return -1, Version{}, refuse("open", name, ErrTooLarge)
	}
	return fd, versionOf(&st), nil
}

// ReadFile reads the regular file name whole, refusing it (ErrTooLarge)
// past max bytes — counted on the bytes read, so a file that grows while
// it is read never passes the cap. max must be positive.
func (r *Root) ReadFile(name string, max int64) ([]byte, Version, error) {
	return r.readFile(name, max, false)
}

// readFile is ReadFile; raw makes its system calls raw ([Root.ReadFileRaw]).
func (r *Root) readFile(name string, max int64, raw bool) ([]byte, Version, error) {
	if max <= 0 {
		return nil, Version{}, refuse("read", name, ErrTooLarge)
	}
	var st unix.Stat_t
	fd, err := r.openRegular("read", name, &st, raw)
	if err != nil {
		return nil, Version{}, err
	}
	defer closeFd(fd, raw)
	if st.Size > max {
		return nil, Version{}, refuse("read", name, ErrTooLarge)
	}
	b, err := capped(fd, st.Size, max, name, raw)
	if err != nil {
		return nil, Version{}, err
	}
	return b, versionOf(&st), nil
}

// ReadCapped reads fd, a regular file opened for reading (this package's
// or one a broker handed back), to its end, refusing it (ErrTooLarge)
// once more than max bytes came, whatever size (its fstat size, which
// only sizes the first buffer) said. name is for the error.
func ReadCapped(fd int, size, max int64, name string) ([]byte, error) {
	return capped(fd, size, max, name, false)
}

// capped is ReadCapped; raw as in readCapped.
func capped(fd int, size, max int64, name string, raw bool) ([]byte, error) {
	b, err := readCapped(fd, size, max, raw)
	if err == errTooMany {
		return nil, refuse("read", name, ErrTooLarge)
	}
	if err != nil {
		return nil, fail("read", name, err)
	}
	return b, nil
}

// clearNonblock clears O_NONBLOCK in one call: F_SETFL with 0, since no
// other flag F_SETFL changes (O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME) was
// set by readFlags.
func clearNonblock(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	return err
}

// readCapped reads fd to its end, failing with errTooMany once more than
// max bytes came, whatever size said: size only sizes the first buffer.
// raw makes each read a raw system call ([Root.ReadFileRaw] only).
func readCapped(fd int, size, limit int64, raw bool) ([]byte, error) {
	size = min(max(size, 0), limit)
	buf := make([]byte, 0, size+1) // +1 sees growth without a second read call
	for {
		if int64(len(buf)) > limit {
			return nil, errTooMany
		}
		if len(buf) == cap(buf) {
			n := min(max(int64(cap(buf))*2, 512), limit+1)
			nb := make([]byte, len(buf), n)
			copy(nb, buf)
			buf = nb
		}
		var n int
		var err error
		if raw {
			n, err = rawRead(fd, buf[len(buf):cap(buf)])
		} else {
			n, err = unix.Read(fd, buf[len(buf):cap(buf)])
		}
		if err == unix.EINTR {
			continue
		}
		// EAGAIN (O_NONBLOCK is still set) is not retried: a regular
		// file that answers it is a filesystem to refuse, not to spin on.
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Info is what [Root.Stat] says of a name.
type Info struct {
	Mode    fs.FileMode // type and permission bits, as io/fs has them
	Size    int64
	ModTime time.Time
	Version Version // meaningful for a regular file
	Nlink   uint64  // names the file has: above 1, a hard link may lead outside the root
}

// Stat describes name without opening it for reading: any kind of file,
// but never through a link, and a link itself is refused (ErrLink).
func (r *Root) Stat(name string) (Info, error) {
	fd, err := r.resolve("stat", name, unix.O_PATH)
	if err != nil {
		return Info{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Info{}, fail("stat", name, err)
	}
	return Info{
		Mode:    fileMode(st.Mode),
		Size:    st.Size,
		ModTime: time.Unix(0, st.Mtim.Nano()),
		Version: versionOf(&st),
		Nlink:   uint64(st.Nlink),
	}, nil
}

// fileMode converts a stat mode to io/fs's bits.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
