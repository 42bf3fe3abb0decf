package ownerdir

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// ErrBadRoot is wrapped by every refusal of a root folder.
var ErrBadRoot = errors.New("refused as a root")

// OpenRoot opens name beneath parent as O_PATH|O_DIRECTORY|O_NOFOLLOW,
// creating it 0700 first when create is set, and refuses a link, another
// uid's folder, or one looser than its rule (strict: no group or other
// bit; otherwise no group or other write).
func OpenRoot(parent *os.File, name string, create, strictMode bool) (*os.File, error) {
	pfd := int(parent.Fd())
	if create {
		if err := unix.Mkdirat(pfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("make %s: %w", name, err)
		}
	}
	fd, err := ownerfile.OpenDir(pfd, name, unix.O_PATH)
	if err != nil {
		if errors.Is(err, ownerfile.ErrLink) {
			return nil, fmt.Errorf("%s is a link or not a folder: %w", name, ErrBadRoot)
		}
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	if err := checkRoot(fd, name, strictMode); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func checkRoot(fd int, name string, strictMode bool) error {
	r := ownerfile.Rule{Type: unix.S_IFDIR, Forbid: 0o022}
	if strictMode {
		r.Forbid = 0o077
	}
	if err := ownerfile.Check(fd, r); err != nil {
		return fmt.Errorf("%s: %w: %w", name, err, ErrBadRoot)
	}
	return nil
}
