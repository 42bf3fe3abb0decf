package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"lnk.dev/lnk/services/memory/memsock"
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
			if err := memsock.CheckServer(c); err != nil {
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

// ErrNotRunning is Stop's answer where no service listens.
var ErrNotRunning = memsock.ErrNotRunning

// Stop asks the service on sock to end (memsock.Stop).
func Stop(ctx context.Context, sock string) error { return memsock.Stop(ctx, sock) }

// Need makes sure the service on sock serves agent id, or has retired
// so that the next session starts one that does (memsock.Need).
func Need(ctx context.Context, sock, id string) error { return memsock.Need(ctx, sock, id) }
