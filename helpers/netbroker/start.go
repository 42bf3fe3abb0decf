package netbroker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
)

// A proxy's socket is proxy-<random>.sock in its folder: one per
// sandbox, so two sandboxes of one agent never take each other's.
func socketName() string {
	var b [8]byte
	rand.Read(b[:])
	return "proxy-" + hex.EncodeToString(b[:]) + ".sock"
}

// NewSecret makes a proxy's secret: 32 random bytes, hex.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Options are what [Start] needs besides the grants.
type Options struct {
	// Home is the owner's HOME; the socket goes in
	// Home/.lnk/agents/.net/<agent id>/ (or a one-run folder).
	Home string
	// NetDir, if set, is ~/.lnk/agents/.net already opened (see
	// [OpenNetDir]), for a process confined before it starts the proxy.
	// Start borrows it; the caller closes it after Close.
	NetDir *os.File
	// Config carries the hooks (Resolver, Log, Routes, limits); its
	// Rules are made from the grants by Start.
	Config Config
	// Sealed, if it names any secret, serves their routes
	// (/_link/s/<Secret>/sealed/<NAME>/…) as Config.Routes.
	Sealed *SealedOptions
}

// Running is a started proxy: its socket, its folder, and Close.
type Running struct {
	*Proxy
	// Socket is the unix socket's path, mode 0600 in a 0700 folder.
	Socket string
	// Dir is the folder holding it.
	Dir string
	// Secret is the proxy's own secret: the SOCKS5 password, and the
	// path secret of its sealed routes. Only its sandbox is told it.
	Secret string
	// Placeholders are the sealed secrets' placeholders, by name.
	Placeholders map[string]string
	parentFD     int
	name         string
	oneRun       bool
	dirFD        int
	served       chan error
	ln           net.Listener
}

// Start starts the proxy for one sandbox with grants c: it makes the
// socket's folder without following a link anywhere under Home/.lnk,
// binds the socket (0600) and serves it until Close. A run with no agent
// (c.AgentID empty) gets a one-run folder that Close removes.
func Start(c *caps.Compiled, o Options) (*Running, error) {
	rules, err := RulesFrom(c)
	if err != nil {
		return nil, err
	}
	cfg := o.Config
	cfg.Rules = rules
	if cfg.SOCKSSecret == "" {
		cfg.SOCKSSecret = NewSecret()
	}
	var sealed *Sealed
	if o.Sealed != nil && len(o.Sealed.Names) > 0 {
		if cfg.Routes != nil {
			return nil, errors.New("netbroker: both Config.Routes and sealed secrets")
		}
		if sealed, err = sealedRoutes(c.AgentID, cfg.SOCKSSecret, o.Sealed); err != nil {
			return nil, err
		}
		cfg.Routes = sealed
	}
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if sealed != nil {
		bindSealed(sealed, p) // before Serve: no request reads it sooner
	}
	name, oneRun := c.AgentID, false
	if name == "" {
		var b [12]byte
		rand.Read(b[:])
		name, oneRun = "run-"+hex.EncodeToString(b[:]), true
	} else if !isAgentID(name) {
		return nil, fmt.Errorf("netbroker: agent id %q is not 32 lowercase hex digits", name)
	}
	netDir := o.NetDir
	if netDir == nil {
		if netDir, err = OpenNetDir(o.Home); err != nil {
			return nil, err
		}
		defer netDir.Close()
	}
	fd, err := ownerdir.Below(int(netDir.Fd()), []string{name})
	if err != nil {
		return nil, err
	}
	parent, err := unix.FcntlInt(netDir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	r := &Running{Proxy: p, Secret: cfg.SOCKSSecret, Dir: filepath.Join(o.Home, ".lnk", "agents", ".net", name), parentFD: parent,
		oneRun: oneRun, dirFD: fd, served: make(chan error, 1)}
	if sealed != nil {
		r.Placeholders = sealed.Placeholders
	}
	r.name = socketName()
	r.Socket = filepath.Join(r.Dir, r.name)
	// Bind through the held folder, so a link swapped in on the path
	// can't move the socket elsewhere.
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(fd)+"/"+r.name)
	if err != nil {
		unix.Close(fd)
		unix.Close(parent)
		return nil, fmt.Errorf("netbroker: binding %s: %w", r.Socket, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := unix.Fchmodat(fd, r.name, 0o600, 0); err != nil {
		ln.Close()
		unix.Close(fd)
		unix.Close(parent)
		return nil, fmt.Errorf("netbroker: chmod %s: %w", r.Socket, err)
	}
	r.ln = ln
	go func() { r.served <- p.Serve(ln) }()
	return r, nil
}

// Close stops the proxy, removes its socket, and a one-run folder.
func (r *Running) Close() error {
	r.Proxy.Close()
	<-r.served
	unix.Unlinkat(r.dirFD, r.name, 0)
	unix.Close(r.dirFD)
	if r.oneRun {
		unix.Unlinkat(r.parentFD, filepath.Base(r.Dir), unix.AT_REMOVEDIR)
	}
	unix.Close(r.parentFD)
	return nil
}

func isAgentID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// OpenNetDir opens (making them 0700 if missing) ~/.lnk/agents/.net,
// never following a link below home.
func OpenNetDir(home string) (*os.File, error) {
	d, err := ownerdir.Open(home, ".lnk", "agents", ".net")
	if err != nil {
		return nil, fmt.Errorf("netbroker: %w", err)
	}
	return d, nil
}
