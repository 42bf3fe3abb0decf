package resolve

import (
	"encoding/binary"
	"io/fs"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Entry is one name in a folder, as a listing found it.
type Entry struct {
	Path string      // relative to the held folder ("a/b/c.txt")
	Name string      // the last component
	Type fs.FileMode // the type bits only (fs.ModeDir, fs.ModeSymlink, …; 0 for a regular file)
}

// IsDir reports whether the entry was a folder when listed.
func (e Entry) IsDir() bool { return e.Type&fs.ModeDir != 0 }

// ListOptions bound a listing.
type ListOptions struct {
	SkipHidden bool // leave out every name starting with "."
	Max        int  // at most this many entries, else ErrTooLarge; 0 means 100,000
}

// List lists the folder name, sorted by name, never through a link. A
// link in it is listed as a link (fs.ModeSymlink), never followed.
func (r *Root) List(name string, opt ListOptions) ([]Entry, error) {
	fd, err := r.resolve("list", name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ents, _, err := readDir(fd, name, opt.SkipHidden, maxEntries(opt), false)
	if err != nil {
		return nil, fail("list", name, err)
	}
	return ents, nil
}

// ListFirst lists the folder name as [Root.List] does, but past opt.Max
// entries answers the first opt.Max by name and cut true, rather than
// refusing: the whole folder is read, holding at most twice opt.Max
// entries at a time.
func (r *Root) ListFirst(name string, opt ListOptions) (ents []Entry, cut bool, err error) {
	fd, err := r.resolve("list", name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	ents, cut, err = readDir(fd, name, opt.SkipHidden, maxEntries(opt), true)
	if err != nil {
		return nil, false, fail("list", name, err)
	}
	return ents, cut, nil
}

func maxEntries(opt ListOptions) int {
	if opt.Max <= 0 {
		return defaultMaxEntries
	}
	return opt.Max
}

const defaultMaxEntries = 100_000

// readDir reads every entry of the open folder fd, sorted by name: past
// max of them, errTooMany, or with cut the first max by name and more
// true.
func readDir(fd int, dir string, skipHidden bool, max int, cut bool) (out []Entry, more bool, err error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
			if len(b) < 19 {
				return nil, false, unix.EIO
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, false, unix.EIO
			}
			typ, nameb := b[18], b[19:reclen]
			if i := indexNUL(nameb); i >= 0 {
				nameb = nameb[:i]
			}
			b = b[reclen:]
			name := string(nameb)
			if name == "." || name == ".." || (skipHidden && strings.HasPrefix(name, ".")) {
				continue
			}
			if len(out) >= max && !cut {
				sortEntries(out)
				return out, false, errTooMany
			}
			if len(out) >= 2*max { // keep the first max by name, read on
				sortEntries(out)
				out, more = out[:max], true
			}
			t, err := direntType(fd, name, typ)
			if err == unix.ENOENT {
				continue // gone since it was listed
			}
			if err != nil {
				return nil, false, err
			}
			out = append(out, Entry{Path: join(dir, name), Name: name, Type: t})
		}
	}
	sortEntries(out)
	if len(out) > max {
		out, more = out[:max], true
	}
	return out, more, nil
}

func sortEntries(e []Entry) { sort.Slice(e, func(i, j int) bool { return e[i].Name < e[j].Name }) }

// errTooMany is an errno-shaped marker classify turns into ErrTooLarge.
var errTooMany = unix.EFBIG

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// direntType is the entry's type from d_type, or from fstatat without
// following (one component, from the held folder) where the filesystem
// gives DT_UNKNOWN.
func direntType(dirfd int, name string, typ uint8) (fs.FileMode, error) {
	switch typ {
	case unix.DT_REG:
		return 0, nil
	case unix.DT_DIR:
		return fs.ModeDir, nil
	case unix.DT_LNK:
		return fs.ModeSymlink, nil
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, nil
	case unix.DT_SOCK:
		return fs.ModeSocket, nil
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, nil
	case unix.DT_BLK:
		return fs.ModeDevice, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return fileMode(st.Mode).Type(), nil
}

func join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
