package initstage

import (
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
)

// relayBacklog is how many of the command's connections wait for the
// proxy to accept them: as many as the proxy holds open at once
// (netbroker's MaxConns), so a burst the command makes before the proxy
// has the listener (it starts beside bubblewrap's setup) is queued, not
// dropped to a SYN retried a second later.
const relayBacklog = 256

// handRelay listens on 127.0.0.1:r.Port, inside the sandbox's own
// network, and hands the listener to the proxy on the channel at fd ch
// (internal/connpass), with the armed lifeline (-1: none) for the proxy
// to hold for as long as it serves; then closes its own copies. The
// listener exists before the command starts, so the command never races
// it: a connection made before the proxy accepts waits in its backlog.
// No process inside the sandbox relays anything: the proxy, outside,
// accepts the sandbox's connections itself.
func handRelay(r *Relay, ch, lifeline int) error {
	defer unix.Close(ch)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("relay: socket: %w", err)
	}
	defer unix.Close(fd)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(r.Port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("relay: listen on 127.0.0.1:%d: %w", r.Port, err)
	}
	if err := unix.Listen(fd, relayBacklog); err != nil {
		return fmt.Errorf("relay: listen: %w", err)
	}
	var held []int
	if lifeline >= 0 {
		held = append(held, lifeline)
	}
	if err := connpass.PassListener(ch, fd, held...); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	return nil
}
