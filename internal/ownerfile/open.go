package ownerfile

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLink is returned, wrapped, when a link (or a non-folder where a
// folder was needed) stands in the way: nothing is followed.
var ErrLink = errors.New("a link or not a folder, which Link never follows")

// always is added to every open's flags.
const always = unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NOCTTY

// Open opens the single name in the folder dirfd with flags plus
// O_NOFOLLOW|O_CLOEXEC|O_NOCTTY (perm applies with O_CREAT). A name with
// a '/' or "." / ".." is refused; a link at name is ELOOP, wrapped with
// [ErrLink].
func Open(dirfd int, name string, flags int, perm uint32) (int, error) {
	if err := oneName(name); err != nil {
		return -1, err
	}
	fd, err := unix.Openat(dirfd, name, flags|always, perm)
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("%s is %w: %w", name, ErrLink, err)
	}
	return fd, err
}

// OpenDir opens the folder rel (a relative path, "." allowed) beneath
// the held folder root with flags (O_RDONLY or O_PATH) plus O_DIRECTORY,
// through no link at all and never leaving root. A link or non-folder on
// the way is refused with [ErrLink].
func OpenDir(root int, rel string, flags int) (int, error) {
	if strings.HasPrefix(rel, "/") {
		return -1, fmt.Errorf("%s: not a path relative to its folder", rel)
	}
	fd, err := resolve(root, rel, flags|unix.O_DIRECTORY, unix.RESOLVE_BENEATH)
	if errors.Is(err, unix.ENOTDIR) {
		return -1, fmt.Errorf("%s: %w (%w)", rel, ErrLink, err)
	}
	return fd, err
}

// OpenPath opens the absolute path with flags (O_NOFOLLOW|O_CLOEXEC|
// O_NOCTTY added) through no link in any component. It is the way in for
// a path the owner names (a spec file, ~/.config/systemd/user); a link
// anywhere on it is refused with [ErrLink].
func OpenPath(path string, flags int) (int, error) {
	if !strings.HasPrefix(path, "/") {
		return -1, fmt.Errorf("%s: not an absolute path", path)
	}
	return resolve(unix.AT_FDCWD, path, flags, 0)
}

// resolveRetries is how many more times an open that met a concurrent
// rename is asked again before its EAGAIN is returned.
const resolveRetries = 64

func resolve(dirfd int, path string, flags int, extra uint64) (int, error) {
	// RESOLVE_NO_SYMLINKS refuses a link in the last component too, with
	// ELOOP; O_NOFOLLOW is left out, since with O_PATH it would open the
	// link itself and O_DIRECTORY then call it ENOTDIR.
	add := unix.O_CLOEXEC | unix.O_NOCTTY
	if flags&unix.O_PATH != 0 {
		add = unix.O_CLOEXEC // openat2 takes no other flag with O_PATH
	}
	how := &unix.OpenHow{
		Flags:   uint64(flags | add),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | extra,
	}
	fd, err := unix.Openat2(dirfd, path, how)
	// A scoped lookup (RESOLVE_BENEATH) that saw a rename elsewhere on the
	// machine cannot prove it stayed beneath its folder and says EAGAIN;
	// the kernel's answer is to ask again. A bounded number of tries keeps
	// a busy machine from failing an owner's open, and a path renamed
	// without end still ends in an error, never in a walk that trusts it.
	for try := 0; errors.Is(err, unix.EAGAIN) && try < resolveRetries; try++ {
		fd, err = unix.Openat2(dirfd, path, how)
	}
	if errors.Is(err, unix.ENOSYS) {
		fd, err = walk(dirfd, path, flags)
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return -1, fmt.Errorf("%s: %w (%w)", path, ErrLink, err)
	}
	return fd, err
}

// walk is resolve without openat2: one O_NOFOLLOW open per component,
// each from the one before; ".." is refused (it could leave the root).
func walk(dirfd int, path string, flags int) (int, error) {
	start := "."
	if strings.HasPrefix(path, "/") {
		start = "/"
	}
	fd, err := unix.Openat(dirfd, start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	for len(parts) > 0 && parts[len(parts)-1] == "." {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		parts = []string{"."}
	}
	for i, p := range parts {
		if p == ".." {
			unix.Close(fd)
			return -1, unix.EXDEV
		}
		fl := unix.O_PATH | unix.O_DIRECTORY
		if i == len(parts)-1 {
			fl = flags
		}
		next, err := unix.Openat(fd, p, fl|always, 0)
		if err != nil {
			var st unix.Stat_t
			if errors.Is(err, unix.ENOTDIR) && unix.Fstatat(fd, p, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			}
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = next
	}
	// O_PATH|O_NOFOLLOW opens a link as itself: refused, as openat2 does.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		if err == nil {
			err = unix.ELOOP
		}
		return -1, err
	}
	return fd, nil
}

func oneName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return fmt.Errorf("%q is not one name in its folder", name)
	}
	return nil
}
