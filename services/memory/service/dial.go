package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/peercred"
)

// startWait bounds how long Dial waits for a service it started.
const startWait = 10 * time.Second

// Dial opens a session for agent id on the service's socket sock. Where
// no service listens (no socket, or none accepting) it calls start once
// (which starts lnk-memory serve) and tries again until startWait. The
// service must run as this process's uid (SO_PEERCRED), else the session
// is refused before a byte is sent. The connection returned has said
// Hello; the MCP session follows on it.
func Dial(ctx context.Context, sock, id string, start func() error) (net.Conn, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startWait)
	started := false
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "unix", sock)
		if err == nil {
			if err := checkServer(c); err != nil {
				c.Close()
				return nil, err
			}
			if _, err := fmt.Fprint(c, Hello+id+"\n"); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		}
		if !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, err
		}
		if !started {
			started = true
			if err := start(); err != nil {
				return nil, fmt.Errorf("starting the memory service: %w", err)
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the memory service did not listen within %s: %w", startWait, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkServer refuses a listener not of this process's uid.
func checkServer(c net.Conn) error {
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
