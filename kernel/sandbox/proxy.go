package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	cmd       *exec.Cmd
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
	cmd := exec.Command(netbroker, args...)
	if tb != nil {
		cmd.ExtraFiles = []*os.File{tb.Dir}
	}
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
	line, err := bufio.NewReader(out).ReadString('\n')
	sock := strings.TrimSpace(line)
	if err != nil || !filepath.IsAbs(sock) {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("the proxy (lnk-netbroker) did not start: see its message above")
	}
	p := &Proxy{Socket: sock, cmd: cmd}
	if tb != nil {
		p.ToolRoute = tb.Route
	}
	return p, nil
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
