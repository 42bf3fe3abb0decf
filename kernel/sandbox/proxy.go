package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lnk.dev/lnk/caps"
)

// NeedsProxy reports whether grants c reach anything through Link's
// proxy: [internet], [lan] or [localhost] ports, behind its own network.
func NeedsProxy(c *caps.Compiled) bool {
	if c.NetworkMode == "host" {
		return false
	}
	// Tools ([tools]) are reached through the proxy's mcp route.
	return c.Internet.On || len(c.LANHosts) > 0 || len(c.LocalhostPorts) > 0 || len(c.Tools) > 0
}

// Proxy is a running lnk-netbroker for one sandbox.
type Proxy struct {
	Socket string
	// ToolRoute is the tool bridge's route prefix, "/_link/s/<secret>/mcp/"
	// ("" with no bridge): Build puts it in $LNK_TOOL_<NAME>.
	ToolRoute string
	// Secret is the proxy's own secret: the SOCKS5 password in
	// $ALL_PROXY and the path secret of $LNK_SEALED_<NAME>_URL.
	Secret string
	// Placeholders are the sealed secrets' placeholders, by name: the
	// sandbox's $NAME.
	Placeholders map[string]string
	cmd          *exec.Cmd
}

// SealedKeys are the sealed secrets granted to a sandbox's agent, by
// name, and the channel on which lnk-keybroker hands the proxy their
// values (its NetChannel's other end). The channel is handed to
// lnk-netbroker as an fd, never a value on argv, stdin or environ.
type SealedKeys struct {
	Names   []string
	Channel *os.File
}

// told is netbroker.Told: the line lnk-netbroker prints after its
// socket's path.
type told struct {
	Secret       string            `json:"secret"`
	Placeholders map[string]string `json:"placeholders"`
}

// ToolBridge is a sandbox's tool bridge (services/toolbridge) as its
// proxy reaches it: the bridge's folder, handed to lnk-netbroker as fd 3
// (so it dials the socket without a path through HOME), the socket's name
// in it, and the route prefix holding the bridge's secret.
type ToolBridge struct {
	Dir   *os.File
	Name  string
	Route string
}

// StartProxy starts lnk-netbroker (netbroker, a path) for grants c: it
// writes c as JSON on its stdin and reads its socket's path. The caller
// waits for the sandbox and then calls Stop; PR_SET_PDEATHSIG (SIGTERM,
// from the caller's locked OS thread) is only the fallback for a caller
// that is killed.
func StartProxy(c *caps.Compiled, netbroker string, degraded bool, stderr *os.File) (*Proxy, error) {
	return StartProxyWithTools(c, netbroker, degraded, stderr, nil)
}

// StartProxyWithTools is StartProxy whose proxy also relays the mcp route
// to tb (nil: none).
func StartProxyWithTools(c *caps.Compiled, netbroker string, degraded bool, stderr *os.File, tb *ToolBridge) (*Proxy, error) {
	return StartProxySealed(c, netbroker, degraded, stderr, tb, nil)
}

// StartProxySealed is StartProxyWithTools whose proxy also serves the
// sealed secrets sk names (nil: none), their values from sk.Channel.
func StartProxySealed(c *caps.Compiled, netbroker string, degraded bool, stderr *os.File, tb *ToolBridge, sk *SealedKeys) (*Proxy, error) {
	pp, err := StartProxyPending(c, netbroker, degraded, stderr, tb, sk)
	if err != nil {
		return nil, err
	}
	return pp.Wait()
}

// PendingProxy is a started lnk-netbroker that has not yet told its
// socket. Build waits for it (Options.ProxyPending) only once the work
// that needs no socket is done, so that work overlaps the proxy's start.
// It is used from one goroutine.
type PendingProxy struct {
	cmd    *exec.Cmd
	out    io.Reader
	tb     *ToolBridge
	waited bool
	p      *Proxy
	err    error
}

// StartProxyPending is StartProxySealed that returns as soon as the
// proxy runs; Wait reads what it tells.
func StartProxyPending(c *caps.Compiled, netbroker string, degraded bool, stderr *os.File, tb *ToolBridge, sk *SealedKeys) (*PendingProxy, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	args := []string{"--home", c.Home}
	if degraded {
		args = append(args, "--degraded")
	}
	if tb != nil {
		args = append(args, "--tool-bridge", tb.Name) // the folder is fd 3
	}
	var extra []*os.File
	if tb != nil {
		extra = append(extra, tb.Dir) // fd 3
	}
	if sk != nil && len(sk.Names) > 0 {
		extra = append(extra, sk.Channel)
		args = append(args, "--sealed", strings.Join(sk.Names, ","), "--keys-fd", strconv.Itoa(2+len(extra)))
	}
	cmd := exec.Command(netbroker, args...)
	cmd.ExtraFiles = extra
	// The proxy needs nothing of the owner's environment: whatever tokens
	// the owner's shell holds never reach it.
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(string(b))
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the proxy: %w", err)
	}
	return &PendingProxy{cmd: cmd, out: out, tb: tb}, nil
}

// Wait reads the proxy's socket and secrets; it kills the proxy if they
// do not come. Later calls return what the first returned.
func (pp *PendingProxy) Wait() (*Proxy, error) {
	if pp.waited {
		return pp.p, pp.err
	}
	pp.waited = true
	br := bufio.NewReader(pp.out)
	line, err := br.ReadString('\n')
	sock := strings.TrimSpace(line)
	var t told
	if err == nil && filepath.IsAbs(sock) {
		line, err = br.ReadString('\n')
		if err == nil {
			err = json.Unmarshal([]byte(line), &t)
		}
	}
	if err != nil || !filepath.IsAbs(sock) || t.Secret == "" {
		pp.cmd.Process.Kill()
		pp.cmd.Wait()
		pp.err = errors.New("the proxy (lnk-netbroker) did not start: see its message above")
		return nil, pp.err
	}
	pp.p = &Proxy{Socket: sock, Secret: t.Secret, Placeholders: t.Placeholders, cmd: pp.cmd}
	if pp.tb != nil {
		pp.p.ToolRoute = pp.tb.Route
	}
	return pp.p, nil
}

// Proxy is the proxy once Wait has read it; nil before, or if it failed.
func (pp *PendingProxy) Proxy() *Proxy { return pp.p }

// Err is Wait's error, once it has been called; nil before.
func (pp *PendingProxy) Err() error { return pp.err }

// Stop ends the proxy whether or not Wait was called (as Proxy.Stop);
// after a failed Wait it is ended already.
func (pp *PendingProxy) Stop() {
	switch {
	case pp.p != nil:
		pp.p.Stop()
	case !pp.waited:
		(&Proxy{cmd: pp.cmd}).Stop()
	}
}

// Stop ends the proxy (SIGTERM; SIGKILL if it has not ended within 10 s)
// and waits for it.
func (p *Proxy) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}
