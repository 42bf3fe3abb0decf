package kernel

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// ErrBadRoot is wrapped by every refusal of a root folder.
var ErrBadRoot = errors.New("refused as a root")

// mode rules for a root: strict folders admit no group or other bit at
// all; the others no group or other write.
const (
	strict = true
	loose  = false
)

// Roots are the folders the kernel holds open for its whole life.
type Roots struct {
	Home   *os.File // HOME itself (opened as the owner named it)
	Lnk    *os.File // ~/.lnk
	Run    *os.File // ~/.lnk/run
	Log    *os.File // ~/.lnk/log
	Link   *os.File // ~/Link
	Agents *os.File // ~/Link/Agents
}

// OpenRoots opens (creating those missing, 0700) and checks the roots
// under home.
func OpenRoots(home string) (*Roots, error) {
	hfd, err := unix.Open(home, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open HOME %s: %w", home, err)
	}
	r := &Roots{Home: os.NewFile(uintptr(hfd), home)}
	steps := []struct {
		dst    **os.File
		parent **os.File
		name   string
		strict bool
	}{
		{&r.Lnk, &r.Home, ".lnk", strict},
		{&r.Run, &r.Lnk, "run", strict},
		{&r.Log, &r.Lnk, "log", strict},
		{&r.Link, &r.Home, "Link", loose},
		{&r.Agents, &r.Link, "Agents", loose},
	}
	for _, s := range steps {
		f, err := OpenRoot(*s.parent, s.name, true, s.strict)
		if err != nil {
			r.Close()
			return nil, err
		}
		*s.dst = f
	}
	return r, nil
}

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

// Close releases every root held.
func (r *Roots) Close() {
	for _, f := range []*os.File{r.Agents, r.Link, r.Log, r.Run, r.Lnk, r.Home} {
		if f != nil {
			f.Close()
		}
	}
}
