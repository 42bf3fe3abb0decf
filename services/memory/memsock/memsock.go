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
	"strings"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/peercred"
)

// SocketName is the socket's name in the service's run/ folder.
const SocketName = "memory.sock"

// StopLine, as a session's whole first line, asks the service to end
// (lnk agent memory stop); only a peer of its uid is heard at all.
const StopLine = "lnk-memory/1 stop\n"

// NeedPrefix, then an agent ID and a newline, as a session's whole first
// line, asks the service whether it serves that agent: it answers
// "served\n", or, where its sandbox does not hold the agent, "retiring\n"
// and takes no new session, ending once the sessions it has end, so the
// next one starts a service holding every agent of its owner.
const NeedPrefix = "lnk-memory/1 need "

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
	return waitGone(ctx, sock)
}

// Need makes sure the service on sock, if one listens, serves agent id:
// one that doesn't (it started before the agent was made) is asked to
// retire, and Need waits until it no longer listens, so the caller's
// next session starts a service for the owner's agents as they are now.
// The sessions it has go on until they end. Nothing listening is no
// error: the caller's session starts the service.
func Need(ctx context.Context, sock, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if err := CheckServer(c); err != nil {
		return err
	}
	c.SetDeadline(time.Now().Add(stopWait))
	if _, err := fmt.Fprint(c, NeedPrefix+id+"\n"); err != nil {
		return err
	}
	answer, err := readLine(c, 64)
	switch {
	case err != nil:
		return fmt.Errorf("the memory service did not say whether it serves agent %s: %w", id, err)
	case answer == "served\n", strings.HasPrefix(answer, "refused: "):
		// A service older than the need line refuses it as a bad first
		// line: the session that follows gets its own answer.
		return nil
	case answer != "retiring\n":
		return fmt.Errorf("the memory service answered %q to whether it serves agent %s", answer, id)
	}
	return waitGone(ctx, sock)
}

// readLine reads one line of at most n bytes, a byte at a time.
func readLine(r io.Reader, n int) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < n {
		if _, err := io.ReadFull(r, b); err != nil {
			return string(line), err
		}
		line = append(line, b[0])
		if b[0] == '\n' {
			break
		}
	}
	return string(line), nil
}

// waitGone waits until nothing accepts a connection on sock.
func waitGone(ctx context.Context, sock string) error {
	var d net.Dialer
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) {
		c, err := d.DialContext(ctx, "unix", sock)
		if err != nil {
			return nil
		}
		c.Close()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the memory service still listens %s after it was asked to stop", stopWait)
}
