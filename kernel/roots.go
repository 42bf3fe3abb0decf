package kernel

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
)

// ErrBadRoot is wrapped by every refusal of a root folder.
var ErrBadRoot = ownerdir.ErrBadRoot

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
		f, err := ownerdir.OpenRoot(*s.parent, s.name, true, s.strict)
		if err != nil {
			r.Close()
			return nil, err
		}
		*s.dst = f
	}
	return r, nil
}

// Close releases every root held.
func (r *Roots) Close() {
	for _, f := range []*os.File{r.Agents, r.Link, r.Log, r.Run, r.Lnk, r.Home} {
		if f != nil {
			f.Close()
		}
	}
}
