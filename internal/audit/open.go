package audit

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// ErrNotOurs is the refusal of a log file or folder that is a link, not
// of the expected type, another uid's, or looser than 0600 / 0700.
var ErrNotOurs = errors.New("not a file of this owner's")

// DirName is the log's folder inside ~/.lnk; FileName the log inside it.
const (
	DirName  = "log"
	FileName = "audit.log"
)

// OpenDir opens (creating it 0700 when create is set) the log's folder
// beneath lnkDir, the held handle of ~/.lnk, never through a link. The
// folder returned is an O_PATH handle.
func OpenDir(lnkDir *os.File, create bool) (*os.File, error) {
	return openDirAt(int(lnkDir.Fd()), DirName, create)
}

// OpenDirFromHome opens ~/.lnk/log from the HOME folder home, component by
// component without following a link. It is the reader's way in.
func OpenDirFromHome(home string) (*os.File, error) {
	h, err := unix.Open(home, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open home %s: %w", home, err)
	}
	defer unix.Close(h)
	lnk, err := openDirAt(h, ".lnk", false)
	if err != nil {
		return nil, err
	}
	defer lnk.Close()
	return openDirAt(int(lnk.Fd()), DirName, false)
}

func openDirAt(dirfd int, name string, create bool) (*os.File, error) {
	var fd int
	var err error
	if create {
		fd, err = ownerfile.MakeDir(dirfd, name, unix.O_PATH, ownerfile.PrivateDir)
	} else if fd, err = ownerfile.OpenDir(dirfd, name, unix.O_PATH); err == nil {
		if err = ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
			unix.Close(fd)
		}
	}
	switch {
	case errors.Is(err, ownerfile.ErrLink):
		return nil, fmt.Errorf("folder %s: %w (a link or not a folder)", name, ErrNotOurs)
	case errors.Is(err, ownerfile.ErrNotOwners):
		return nil, fmt.Errorf("folder %s: %w (%w)", name, ErrNotOurs, err)
	case err != nil:
		return nil, fmt.Errorf("open folder %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openFileAt opens name in dir with flags plus O_NOFOLLOW|O_CLOEXEC|
// O_NONBLOCK and refuses anything but a regular file of this uid with one
// link and no group or other bits.
func openFileAt(dir *os.File, name string, flags int) (*os.File, error) {
	fd, err := ownerfile.Open(int(dir.Fd()), name, flags|unix.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, ownerfile.ErrLink) {
			return nil, fmt.Errorf("log %s is a link: %w", name, ErrNotOurs)
		}
		if errors.Is(err, unix.ENXIO) {
			return nil, fmt.Errorf("log %s is a fifo or a device: %w", name, ErrNotOurs)
		}
		return nil, err
	}
	if err := ownerfile.Check(fd, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("log %s: %w (%w)", name, ErrNotOurs, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
