// Package ownerdir opens the owner's own folders under ~/.lnk one by one,
// each from the one before: made 0700 where missing, never through a
// link, and refused when another user owns one or others can reach it.
// The proxy's sockets folder and the tool bridge's both come from here.
// Each step is internal/ownerfile's MakeDir and Check.
//
// # Security
//
// Holds nothing past a call but the descriptor it returns. Trusts HOME
// itself (the owner's); nothing below it.
package ownerdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Open opens home/parts[0]/parts[1]/… as Below does, from a handle on
// home, which must be an absolute path.
func Open(home string, parts ...string) (*os.File, error) {
	if !filepath.IsAbs(home) {
		return nil, errors.New("HOME is not an absolute path")
	}
	h, err := unix.Open(home, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening HOME: %w", err)
	}
	fd, err := Below(h, parts)
	unix.Close(h)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(append([]string{home}, parts...)...)), nil
}

// Below opens each of parts below the folder fd (which it leaves open),
// making each with mode 0700 if missing, never following a link, and
// refusing a folder that isn't the owner's or that others can reach. It
// returns the last one's fd (O_CLOEXEC).
func Below(fd int, parts []string) (int, error) {
	fd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for i, part := range parts {
		what := filepath.Join(parts[:i+1]...)
		next, err := ownerfile.MakeDir(fd, part, unix.O_RDONLY, ownerfile.Rule{})
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("opening %s (a link is never followed): %w", what, err)
		}
		fd = next
		if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("%s must be the owner's and mode 0700: %w", what, err)
		}
	}
	return fd, nil
}
