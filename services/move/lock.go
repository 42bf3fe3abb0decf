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

// ErrNameBusy is returned when another lnk agent create, or a receive,
// of that agent name holds the name's lock.
var ErrNameBusy = errors.New("another lnk agent create or receive of this agent name is under way (~/.lnk/moving holds the name's lock)")

// lockMove takes ~/.lnk/moving/<id>.lock, held until the returned func
// is called, or ErrBusy when another move holds it.
func lockMove(home, id string) (func(), error) {
	return lockFile(home, id+".lock", ErrBusy)
}

// LockName takes ~/.lnk/moving/name-<name>.lock, held until the returned
// func is called, or ErrNameBusy when another holds it. lnk agent create
// holds it from its check that no placing journal names the agent's name
// until the agent is made, and a receive from its own check until it
// ends, so neither makes the name while the other is between its check
// and its making: a create can't slip in before a receive's journal head
// and leave that journal one recover refuses. name is an agent's name
// (caps.CheckName): no '/'.
func LockName(home, name string) (func(), error) {
	return lockFile(home, "name-"+name+".lock", ErrNameBusy)
}

// lockFile takes ~/.lnk/moving/<file>, never waiting: busy when another
// process holds it. The file is kept after: one removed while another
// waits on it would be two locks.
func lockFile(home, file string, busy error) (func(), error) {
	d, err := ownerdir.Open(home, ".lnk", "moving")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := ownerfile.Open(int(d.Fd()), file, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening ~/.lnk/moving/%s: %w", file, err)
	}
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("~/.lnk/moving/%s: %w", file, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, busy
		}
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}
