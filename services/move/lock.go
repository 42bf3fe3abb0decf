package move

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// ErrBusy is returned when another move of the agent holds its lock.
var ErrBusy = errors.New("another move of this agent is under way (~/.lnk/moving holds its lock)")

// lockMove takes ~/.lnk/moving/<id>.lock, held until the returned func
// is called, or ErrBusy when another move holds it.
func lockMove(home, id string) (func(), error) {
	d, err := ownerdir.Open(home, ".lnk", "moving")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := ownerfile.Open(int(d.Fd()), id+".lock", unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening ~/.lnk/moving/%s.lock: %w", id, err)
	}
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("~/.lnk/moving/%s.lock: %w", id, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}
