// Package memsock is the memory service's socket as what runs outside
// every sandbox reaches it (services/memory/service serves it): its name,
// the check that its listener runs as this process's uid (SO_PEERCRED),
// the agent IDs a session may name, and the owner's stop (lnk agent memory
// stop). It links no index and no MCP, so lnk's command line can stop the
// service without them.
//
// # Security
//
// Holds nothing. Trusts only a listener of its own uid, as the kernel
// names it: another's is refused before a byte is sent.
package memsock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/peercred"
)

// SocketName is the socket's name in the service's run/ folder.
const SocketName = "memory.sock"

// StopLine, as a session's whole first line, asks the service to end
// (lnk agent memory stop); only a peer of its uid is heard at all.
const StopLine = "lnk-memory/1 stop\n"

// MaxID bounds an agent ID.
const MaxID = 64

// CheckID refuses what is not an agent ID as Link makes them.
func CheckID(id string) error {
	if id == "" || len(id) > MaxID || id[0] == '-' {
		return fmt.Errorf("%q is not an agent ID", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%q is not an agent ID", id)
		}
	}
	return nil
}

// CheckServer refuses a listener not of this process's uid.
func CheckServer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	cred, err := peercred.Of(uc)
	if err != nil {
		return fmt.Errorf("who serves the memory socket cannot be learned: %w", err)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the memory socket is served by uid %d, not %d: refused", cred.Uid, os.Getuid())
	}
	return nil
}

// stopWait bounds how long Stop waits for the service to stop listening.
const stopWait = 10 * time.Second

// ErrNotRunning is Stop's answer where no service listens on sock.
var ErrNotRunning = errors.New("the memory service is not running")

// Stop asks the service on sock, which must run as this process's uid
// (SO_PEERCRED), to end, and waits until it no longer listens. Its index
// and notes stay as they are. ErrNotRunning where none listens.
func Stop(ctx context.Context, sock string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		return ErrNotRunning
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if err := CheckServer(c); err != nil {
		return err
	}
	c.SetDeadline(time.Now().Add(stopWait))
	if _, err := fmt.Fprint(c, StopLine); err != nil {
		return err
	}
	answer := make([]byte, len("stopping\n"))
	if _, err := io.ReadFull(c, answer); err != nil || string(answer) != "stopping\n" {
		return fmt.Errorf("the memory service did not agree to stop: %q %v", answer, err)
	}
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) {
		c2, err := d.DialContext(ctx, "unix", sock)
		if err != nil {
			return nil
		}
		c2.Close()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the memory service still listens %s after it was asked to stop", stopWait)
}
