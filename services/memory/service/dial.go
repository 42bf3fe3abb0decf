package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("who serves the memory socket cannot be learned: %w", cerr)
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
	if err := checkServer(c); err != nil {
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
