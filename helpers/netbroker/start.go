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
)

// SocketName is the proxy's socket inside its folder.
const SocketName = "proxy.sock"

// Options are what [Start] needs besides the grants.
type Options struct {
	// Home is the owner's HOME; the socket goes in
	// Home/.lnk/agents/.net/<agent id>/ (or a one-run folder).
	Home string
	// Config carries the hooks (Resolver, Log, Routes, limits); its
	// Rules are made from the grants by Start.
	Config Config
}

// Running is a started proxy: its socket, its folder, and Close.
type Running struct {
	*Proxy
	// Socket is the unix socket's path, mode 0600 in a 0700 folder.
	Socket string
	// Dir is the folder holding it.
	Dir    string
	home   string
	oneRun bool
	dirFD  int
	served chan error
	ln     net.Listener
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
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	name, oneRun := c.AgentID, false
	if name == "" {
		var b [12]byte
		rand.Read(b[:])
		name, oneRun = "run-"+hex.EncodeToString(b[:]), true
	} else if !isAgentID(name) {
		return nil, fmt.Errorf("netbroker: agent id %q is not 32 lowercase hex digits", name)
	}
	fd, err := openFolder(o.Home, []string{".lnk", "agents", ".net", name})
	if err != nil {
		return nil, err
	}
	r := &Running{Proxy: p, Dir: filepath.Join(o.Home, ".lnk", "agents", ".net", name), home: o.Home,
		oneRun: oneRun, dirFD: fd, served: make(chan error, 1)}
	r.Socket = filepath.Join(r.Dir, SocketName)
	unix.Unlinkat(fd, SocketName, 0)
	// Bind through the held folder, so a link swapped in on the path
	// can't move the socket elsewhere.
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(fd)+"/"+SocketName)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netbroker: binding %s: %w", r.Socket, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := unix.Fchmodat(fd, SocketName, 0o600, 0); err != nil {
		ln.Close()
		unix.Close(fd)
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
	unix.Unlinkat(r.dirFD, SocketName, 0)
	unix.Close(r.dirFD)
	if r.oneRun {
		parent, err := openFolder(r.home, []string{".lnk", "agents", ".net"})
		if err == nil {
			unix.Unlinkat(parent, filepath.Base(r.Dir), unix.AT_REMOVEDIR)
			unix.Close(parent)
		}
	}
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

// openFolder opens home, then each of parts below it, making each with
// mode 0700 if missing, never following a link, and refusing a folder
// that isn't the owner's or that others can reach. It returns the last
// one's fd (O_PATH-free, O_CLOEXEC).
func openFolder(home string, parts []string) (int, error) {
	if !filepath.IsAbs(home) {
		return -1, errors.New("netbroker: HOME is not an absolute path")
	}
	fd, err := unix.Open(home, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("netbroker: opening HOME: %w", err)
	}
	for i, part := range parts {
		err := unix.Mkdirat(fd, part, 0o700)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return -1, fmt.Errorf("netbroker: making %s: %w", filepath.Join(parts[:i+1]...), err)
		}
		next, err := unix.Openat(fd, part, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("netbroker: opening ~/%s (a link is never followed): %w", filepath.Join(parts[:i+1]...), err)
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
			unix.Close(fd)
			return -1, fmt.Errorf("netbroker: ~/%s must be the owner's and mode 0700 (it is %o)", filepath.Join(parts[:i+1]...), st.Mode&0o777)
		}
	}
	return fd, nil
}
