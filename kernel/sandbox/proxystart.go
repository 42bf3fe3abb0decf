package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/connpass"
)

// ErrProxyFailed is what Proxy.Stop returns for a proxy that ended on
// its own: it failed to start or to serve, and said why on its stderr.
var ErrProxyFailed = errors.New("the proxy (lnk-netbroker) failed: see its message above; the sandbox's connections through it were refused")

// StartProxy is NewProxy, then Launch.
func StartProxy(c *caps.Compiled, netbrokerPath string, degraded bool, stderr *os.File, tb *ToolBridge, sk *SealedKeys) (*Proxy, error) {
	p, err := NewProxy(c, netbrokerPath, degraded, stderr, tb, sk)
	if err != nil {
		return nil, err
	}
	if err := p.Launch(); err != nil {
		return nil, err
	}
	return p, nil
}

// NewProxy readies lnk-netbroker (netbrokerPath) for grants c: it makes
// the proxy's socket, secrets and relay channel, and the command that
// hands them to it with its grants; Launch then starts it. All a sandbox
// is told of its proxy is chosen here, so the sandbox can be built (and
// started) before the proxy runs: Proxy.Relay is the channel on which the
// sandbox hands it its listener (Options.RelayChannel), and what the
// sandbox sends before the proxy serves waits in that listener's backlog.
// tb (nil: none) is the tool bridge its mcp route passes connections to
// (tb.Channel is closed once the proxy holds it); sk (nil: none) the
// sealed secrets it serves, their values from sk.Channel; stderr its
// stderr, which it takes (closed once the proxy holds it, or by Stop).
// The caller runs the sandbox and then calls Stop; PR_SET_PDEATHSIG
// (SIGTERM, from the OS thread that called Launch, which the caller
// keeps locked) is only the fallback for a caller that is killed.
func NewProxy(c *caps.Compiled, netbrokerPath string, degraded bool, stderr *os.File, tb *ToolBridge, sk *SealedKeys) (*Proxy, error) {
	p := &Proxy{ended: make(chan struct{}), home: c.Home, path: netbrokerPath}
	p.handed = append(p.handed, stderr)
	if tb != nil {
		p.handed = append(p.handed, tb.Channel)
	}
	ok := false
	defer func() {
		if !ok {
			p.closeHanded()
		}
	}()
	grants, err := json.Marshal(NetGrants(c))
	if err != nil {
		return nil, err
	}
	p.Secret = netbroker.NewSecret()
	if sk != nil && len(sk.Names) > 0 {
		p.Placeholders = map[string]string{}
		for _, n := range sk.Names {
			p.Placeholders[n] = netbroker.NewPlaceholder(n)
		}
	}
	told, err := json.Marshal(netbroker.Told{Secret: p.Secret, Placeholders: p.Placeholders})
	if err != nil {
		return nil, err
	}
	sock, err := netbroker.Listen(c.Home, c.AgentID)
	if err != nil {
		return nil, fmt.Errorf("the proxy's socket: %w", err)
	}
	p.Socket, p.sock = sock.Path, sock
	lf := sock.File
	// The proxy alone accepts on the socket: lnk keeps no copy once it
	// runs, so a proxy that is gone leaves the sandbox's connections
	// refused.
	p.handed = append(p.handed, lf)
	args := []string{"--home", c.Home}
	if degraded {
		args = append(args, "--degraded")
	}
	// Handed fds, numbered as they come: the tool bridge's channel, the
	// keybroker's channel, then the socket.
	var extra []*os.File
	if tb != nil {
		extra = append(extra, tb.Channel)
		args = append(args, "--tool-bridge-fd", strconv.Itoa(2+len(extra)))
		p.ToolRoute = tb.Route
	}
	if sk != nil && len(sk.Names) > 0 {
		extra = append(extra, sk.Channel)
		args = append(args, "--sealed", strings.Join(sk.Names, ","), "--keys-fd", strconv.Itoa(2+len(extra)))
	}
	extra = append(extra, lf)
	args = append(args, "--listen-fd", strconv.Itoa(2+len(extra)))
	// The relay channel: lnk-init hands the sandbox's listener on it.
	relayRecv, relaySend, err := connpass.Pair()
	if err != nil {
		p.removeSocket()
		return nil, err
	}
	p.handed = append(p.handed, relayRecv)
	p.Relay = relaySend
	extra = append(extra, relayRecv)
	args = append(args, "--relay-fd", strconv.Itoa(2+len(extra)))
	cmd := exec.Command(netbrokerPath, args...)
	cmd.ExtraFiles = extra
	// The proxy needs nothing of the owner's environment: whatever tokens
	// the owner's shell holds never reach it.
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	// Its grants, then what its sandbox is told: never argv or environ.
	cmd.Stdin = bytes.NewReader(append(append(grants, '\n'), append(told, '\n')...))
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	p.cmd = cmd
	ok = true
	return p, nil
}

// Launch starts the proxy NewProxy readied, from the calling OS thread
// (or one of its own, proxyconfined.go), and closes lnk's copies of what
// it handed it. On failure the proxy's socket is removed and its relay
// channel closed: a sandbox started already finds its connections
// refused. Called once.
func (p *Proxy) Launch() error {
	err := startProxyProcess(p, p.home, p.path)
	p.closeHanded()
	if p.sock != nil {
		p.sock.File = nil
	}
	if err != nil {
		p.removeSocket()
		if p.Relay != nil {
			p.Relay.Close()
		}
		close(p.ended)
		return fmt.Errorf("start the proxy: %w", err)
	}
	p.launched.Store(true)
	return nil
}

// removeSocket removes the proxy's socket, once: Remove closes the
// folder's fd, which a second call would close again, whatever it then
// numbered.
func (p *Proxy) removeSocket() {
	if p.sock != nil {
		p.sock.Remove()
		p.sock = nil
	}
}

// closeHanded closes lnk's copies of the fds handed to the proxy.
func (p *Proxy) closeHanded() {
	for _, f := range p.handed {
		f.Close()
	}
	p.handed = nil
}

// waitProxy waits for the proxy to end and records how it ended.
func (p *Proxy) wait() {
	p.cmd.Wait()
	if failedOnItsOwn(p.cmd.ProcessState, p.stopping.Load()) {
		p.failed = ErrProxyFailed
	}
	close(p.ended)
}

// failedOnItsOwn reports whether the proxy's end st was a failure of its
// own: a non-zero exit (it says why first), or a signal that neither
// Stop (SIGTERM, then SIGKILL) nor Ctrl-C (SIGINT, which reaches it too)
// sent. Judged by the status, not by when Stop came: a proxy that
// failed just before Stop is still said.
func failedOnItsOwn(st *os.ProcessState, stopping bool) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return false
	case ws.Exited():
		return ws.ExitStatus() != 0
	case ws.Signaled():
		switch ws.Signal() {
		case syscall.SIGTERM, syscall.SIGINT:
			return false
		case syscall.SIGKILL:
			return !stopping
		}
		return true
	}
	return false
}
