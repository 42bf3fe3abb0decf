package sandbox

import (
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
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

// Proxy is a running lnk-netbroker for one sandbox. lnk makes its
// socket (netbroker.Listen), chooses its secret and placeholders, and
// hands them to it: the socket as an fd, the rest on its stdin after the
// grants. So the sandbox starts at once, never waiting for the proxy:
// what it sends before the proxy serves waits in the socket's backlog,
// and only the proxy accepts it.
type Proxy struct {
	// Port is the loopback port a proxy for a command with no sandbox
	// listens on (the kernel's, for an unconfined start); 0 for a
	// sandbox's.
	Port   uint16
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
	// Relay is the sending end of the proxy's relay channel, for Build
	// (Options.RelayChannel), which takes it; Stop closes it if no
	// sandbox took it.
	Relay    *os.File
	cmd      *exec.Cmd
	home     string     // the owner's HOME, for Launch
	path     string     // lnk-netbroker, for Launch
	handed   []*os.File // lnk's copies of what the proxy is handed, closed once it runs
	launched atomic.Bool
	sock     *netbroker.Socket
	ended    chan struct{} // closed once cmd.Wait returned
	failed   error         // set before ended closes, if it ended on its own
	stopping atomic.Bool
}

// SealedKeys are the sealed secrets granted to a sandbox's agent, by
// name, and the channel on which lnk-keybroker hands the proxy their
// values (its NetChannel's other end). The channel is handed to
// lnk-netbroker as an fd, never a value on argv, stdin or environ.
type SealedKeys struct {
	Names   []string
	Channel *os.File
}

// ToolBridge is a sandbox's tool bridge (services/toolbridge) as its
// proxy reaches it: the proxy's end of a channel the bridge serves
// (internal/connpass: a SOCK_SEQPACKET socket on which the proxy passes
// each tool call's connection), handed to lnk-netbroker as fd 3 and
// closed here once it runs; and the route prefix holding the bridge's
// secret.
type ToolBridge struct {
	Channel *os.File
	Route   string
}

// Stop ends the proxy (SIGTERM; SIGKILL if it has not ended within
// 10 s), waits for it and removes its socket. If the proxy had ended on
// its own before (it failed to start or to serve: its own message says
// why), Stop says so; later calls return the same.
func (p *Proxy) Stop() error {
	if !p.launched.Load() && p.stopping.CompareAndSwap(false, true) {
		// Never started, or failed to (Launch closed ended): nothing to
		// signal or wait for.
		p.closeHanded()
		p.removeSocket()
		if p.Relay != nil {
			p.Relay.Close()
		}
		select {
		case <-p.ended:
		default:
			close(p.ended)
		}
	}
	if p.stopping.CompareAndSwap(false, true) {
		select {
		case <-p.ended:
		default:
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.ended:
			case <-time.After(10 * time.Second):
				p.cmd.Process.Kill()
				<-p.ended
			}
		}
		p.removeSocket()
		if p.Relay != nil {
			p.Relay.Close()
		}
	}
	<-p.ended
	return p.failed
}

// KernelProxy is the proxy the kernel runs for an agent's start, as lnk
// holds it: only what its sandbox is told and the relay channel's
// sending end (for Build). Stop closes that end if no sandbox took it,
// and nothing else: the kernel stops the proxy when the start ends.
func KernelProxy(socket, secret string, placeholders map[string]string, relay *os.File) *Proxy {
	return &Proxy{Socket: socket, Secret: secret, Placeholders: placeholders, Relay: relay, ended: make(chan struct{})}
}
