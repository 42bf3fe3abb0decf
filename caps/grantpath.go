package caps

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// GrantPath turns a path as the owner wrote it into the absolute, cleaned
// path a grant names: "~" and "~/x" against home, "/x" as it is, and a
// relative "x" against base (the agent's files folder; refused when base
// is ""). A NUL byte, a ".." component, "~user" and an empty path are
// refused. It looks at nothing on disk; Resolve does.
func GrantPath(home, base, p string) (string, error) {
	switch {
	case p == "":
		return "", ErrEmptyPath
	case strings.IndexByte(p, 0) >= 0:
		return "", at(ErrNUL, quote(p))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", at(ErrDotDot, quote(p), "name the folder itself, as an absolute or ~/ path")
		}
	}
	var abs string
	switch {
	case p == "~":
		abs = home
	case strings.HasPrefix(p, "~/"):
		abs = filepath.Join(home, p[2:])
	case strings.HasPrefix(p, "~"):
		return "", at(ErrBadPath, quote(p), "write ~/ for your home folder, or an absolute path")
	case strings.HasPrefix(p, "/"):
		abs = filepath.Clean(p)
	case base == "":
		return "", at(ErrBadPath, quote(p), "write an absolute path or one starting with ~/")
	default:
		abs = filepath.Join(base, p)
	}
	if !filepath.IsAbs(abs) {
		return "", at(ErrBadPath, quote(p))
	}
	return abs, nil
}

// Kind is what a resolved path is.
type Kind int

// The kinds Resolve tells apart.
const (
	KindOther Kind = iota
	KindDir
	KindFile
)

// Resolve checks that abs (absolute and cleaned) names a file or folder
// reached through no symbolic link: it opens each component from the one
// before with O_PATH|O_NOFOLLOW, so a link anywhere on the way is refused,
// never followed. A missing component is ErrMissing.
func Resolve(abs string) (Kind, error) {
	kind, _, err := ResolveID(abs)
	return kind, err
}

// ResolveID is Resolve, and the identity of what abs names.
func ResolveID(abs string) (Kind, FileID, error) {
	if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs {
		return KindOther, FileID{}, at(ErrBadPath, quote(abs))
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return KindOther, FileID{}, err
	}
	defer func() { unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return KindOther, FileID{}, err
	}
	kind := KindDir
	sofar := ""
	for _, part := range strings.Split(strings.TrimPrefix(abs, "/"), "/") {
		if part == "" {
			continue
		}
		if kind != KindDir {
			return KindOther, FileID{}, at(ErrMissing, quote(abs), quote(sofar)+" is not a folder")
		}
		sofar += "/" + part
		next, err := ownerfile.Open(fd, part, unix.O_PATH, 0) // a link is opened as itself, then named below
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				return KindOther, FileID{}, at(ErrMissing, quote(abs), "make it first: mkdir -p "+quote(abs))
			}
			return KindOther, FileID{}, err
		}
		unix.Close(fd)
		fd = next
		if err := unix.Fstat(fd, &st); err != nil {
			return KindOther, FileID{}, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			hint := "grant the folder the link points to, by its own path"
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				hint = "grant the real path: " + quote(real)
			}
			return KindOther, FileID{}, at(ErrSymlink, quote(sofar), hint)
		case unix.S_IFDIR:
			kind = KindDir
		case unix.S_IFREG:
			kind = KindFile
		default:
			kind = KindOther
		}
	}
	return kind, FileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// within reports whether p is dir or inside it (both absolute, cleaned).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
