package wayin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
)

// settingsDir opens ~/.lnk/agents/<agent>, the agent's settings folder
// where bridge.json is (0700, through no link).
func settingsDir(home, name string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents", name)
}

// bridgeHarness reaches the harness bridge.json names, read again for
// each message: Link Harness gets a fresh endpoint key at each start.
type bridgeHarness struct{ dir *os.File }

func (b bridgeHarness) SendMessage(ctx context.Context, m endpoint.Message, onTaken func(), onText func(string)) (int64, error) {
	br, err := config.ReadBridge(int(b.dir.Fd()))
	if err != nil {
		return 0, fmt.Errorf("the agent's %s: %w", config.BridgeFile, err)
	}
	c, err := endpoint.NewClient(br)
	if err != nil {
		return 0, err
	}
	return c.SendMessage(ctx, m, onTaken, onText)
}

// Running is an agent's way in as its supervisor runs it.
type Running struct {
	*Server
	dir *os.File
	l   net.Listener
}

// Open makes agent a's way in: a fresh way-in key, its socket (0600) in
// the agent's settings folder, and its limits read from the agent's
// grants at each message. Serve it with Run; Close removes the key so a
// caller after the agent's stop proves nothing.
func Open(home string, a *caps.Agent, logf func(string, ...any)) (*Running, error) {
	d, err := settingsDir(home, a.Name)
	if err != nil {
		return nil, err
	}
	key, err := NewKey(int(d.Fd()))
	if err != nil {
		d.Close()
		return nil, err
	}
	s, err := New(Config{AgentID: a.ID, Owner: a.Owner, Name: a.Name, Key: key, Harness: bridgeHarness{d}, Dir: d, Logf: logf,
		Limits: func() (caps.SchedulerLimits, error) {
			c, err := caps.CompileAgent(home, a.Name)
			if err != nil {
				return caps.SchedulerLimits{}, err
			}
			return c.Limits.Scheduler, nil
		}})
	if err != nil {
		d.Close()
		return nil, err
	}
	path := filepath.Join(home, ".lnk", "agents", a.Name, SocketName)
	l, err := endpoint.ListenUnix(path)
	if err != nil {
		s.Close()
		removeKey(int(d.Fd()))
		d.Close()
		return nil, fmt.Errorf("the agent's way in (%s): %w", path, err)
	}
	return &Running{Server: s, dir: d, l: l}, nil
}

// Run takes messages at the socket until ctx ends.
func (r *Running) Run(ctx context.Context) error {
	return r.Serve(ctx, r.l)
}

// Close ends the answers still read, and removes the key.
func (r *Running) Close() error {
	r.l.Close()
	r.Server.Close()
	err := removeKey(int(r.dir.Fd()))
	return errors.Join(err, r.dir.Close())
}

// CallerFor is the Caller that hands messages to agent name's way in
// under home: its socket, and the key its running way in wrote.
func CallerFor(home string, a *caps.Agent) (*Caller, error) {
	d, err := settingsDir(home, a.Name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	key, err := ReadKey(int(d.Fd()))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: no way-in key", ErrNotListening)
		}
		return nil, err
	}
	return &Caller{Socket: filepath.Join(home, ".lnk", "agents", a.Name, SocketName), AgentID: a.ID, Owner: a.Owner, Key: key}, nil
}
