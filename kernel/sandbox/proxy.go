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
	return c.Internet.On || len(c.LANHosts) > 0 || len(c.LocalhostPorts) > 0
}

// Proxy is a running lnk-netbroker for one sandbox.
type Proxy struct {
	Socket string
	cmd    *exec.Cmd
}

// StartProxy starts lnk-netbroker (netbroker, a path) for grants c: it
// writes c as JSON on its stdin and reads its socket's path. The caller
// waits for the sandbox and then calls Stop; PR_SET_PDEATHSIG (SIGTERM,
// from the caller's locked OS thread) is only the fallback for a caller
// that is killed.
func StartProxy(c *caps.Compiled, netbroker string, degraded bool, stderr *os.File) (*Proxy, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	args := []string{"--home", c.Home}
	if degraded {
		args = append(args, "--degraded")
	}
	cmd := exec.Command(netbroker, args...)
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
	return &Proxy{Socket: sock, cmd: cmd}, nil
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
