package toolbridge

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"

	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/services/toolbridge/hub"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Hubs is where a bridge reaches shared tools (tools-and-asking.txt "A
// shared tool"): a session of a Shared tool is a connection to its hub's
// socket, not a server of its own. The bridge still applies the tool's
// rules before a call reaches the hub.
type Hubs struct {
	Dir string // Link's settings folder, handed to the hub as --dir ("": $HOME/.lnk)
	Bin string // lnk-toolhub ("": beside this program)
}

func (h Hubs) dir() (string, error) {
	if h.Dir != "" {
		return h.Dir, nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		return "", errors.New("no HOME for Link's settings folder")
	}
	return filepath.Join(home, ".lnk"), nil
}

func (h Hubs) bin() (string, error) {
	if h.Bin != "" {
		return h.Bin, nil
	}
	return beside.Program("lnk-toolhub")
}

// serverFor is a new session's server: a process of its own, or, for a
// shared tool, a connection to the hub, which it starts if none listens;
// for a confined bridge, what the kernel started or dialled
// (KernelChannel). It returns the digest of the definition the server
// runs as.
func (b *Bridge) serverFor(ctx context.Context, def *tooldef.Definition) (*server, string, error) {
	if b.Kernel != nil {
		dctx, cancel := context.WithTimeout(ctx, b.Settings.StartWait)
		defer cancel()
		return b.Kernel.server(dctx, def)
	}
	if !def.Shared {
		s, err := startServer(def)
		return s, def.Digest(), err
	}
	dir, err := b.Hubs.dir()
	if err != nil {
		return nil, "", err
	}
	bin, err := b.Hubs.bin()
	if err != nil {
		return nil, "", err
	}
	dctx, cancel := context.WithTimeout(ctx, b.Settings.StartWait)
	defer cancel()
	c, err := hub.Launcher{Bin: bin, Systemd: hub.SystemdUser()}.Dial(dctx, dir, def)
	if err != nil {
		return nil, "", err
	}
	return hubServer(c), def.Digest(), nil
}

// hubServer is a session's server that is a connection to a hub: the
// same ids of the bridge's own toward it, and the hub's ids beyond.
func hubServer(c net.Conn) *server {
	s := &server{stdin: c, stderr: &capBuffer{}, waiting: map[uint64]chan answer{}, done: make(chan struct{}), max: hubLine}
	go s.read(c)
	return s
}
