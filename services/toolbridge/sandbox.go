package toolbridge

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/ownerdir"
)

// Running is one sandbox's bridge, serving its socket
// ~/.lnk/sandbox/bridge/<sandbox>.sock until Close.
type Running struct {
	Bridge *Bridge
	// Sandbox names the sandbox: the agent's name (or "run") and a random
	// suffix, so two sandboxes of one agent never take each other's socket.
	Sandbox string
	// Socket is the socket's path, mode 0600 in a 0700 folder.
	Socket string

	dir    *os.File // the socket's folder, held: it is removed through it
	secret string
	name   string
	ln     net.Listener
	served chan error

	mu       sync.Mutex
	channels []*net.UnixConn // the proxies' channels (ProxyChannel)
	passed   sync.WaitGroup
}

// SandboxName names a new sandbox of agent (empty for a run with no
// agent): the name and a random suffix.
func SandboxName(agent string) string {
	if agent == "" {
		agent = "run"
	}
	return agent + "-" + randomHex(8)
}

// Start starts b for the sandbox named sandbox (see [SandboxName]) under
// home: it makes ~/.lnk/sandbox/bridge without following a
// link, binds <sandbox>.sock (0600) through the held folder, and serves
// it with a fresh route secret, which is never logged.
func Start(home, sandbox string, b *Bridge) (*Running, error) {
	if sandbox == "" || sandbox == "." || sandbox == ".." || strings.ContainsAny(sandbox, "/\x00") {
		return nil, fmt.Errorf("toolbridge: sandbox name %q is not one name", sandbox)
	}
	if !filepath.IsAbs(home) {
		return nil, errors.New("toolbridge: HOME is not an absolute path")
	}
	h, err := unix.Open(home, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("toolbridge: opening HOME: %w", err)
	}
	fd, err := ownerdir.Below(h, []string{".lnk", "sandbox", "bridge"})
	unix.Close(h)
	if err != nil {
		return nil, fmt.Errorf("toolbridge: %w", err)
	}
	b.init()
	r := &Running{Bridge: b, Sandbox: sandbox, secret: randomHex(32), served: make(chan error, 1)}
	r.name = r.Sandbox + ".sock"
	r.Socket = filepath.Join(home, ".lnk", "sandbox", "bridge", r.name)
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(fd)+"/"+r.name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("toolbridge: binding %s: %w", r.Socket, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := unix.Fchmodat(fd, r.name, 0o600, 0); err != nil {
		ln.Close()
		unix.Unlinkat(fd, r.name, 0)
		unix.Close(fd)
		return nil, fmt.Errorf("toolbridge: chmod %s: %w", r.Socket, err)
	}
	r.dir = os.NewFile(uintptr(fd), filepath.Dir(r.Socket))
	r.ln = ln
	go func() { r.served <- (&Server{Bridge: b, Secret: r.secret}).Serve(ln) }()
	return r, nil
}

// Route is the path prefix a sandbox reaches its tools at through its
// proxy, "/_link/s/<secret>/mcp/": it goes only into the sandbox's
// environment ($LNK_TOOL_<NAME>), never into a log.
func (r *Running) Route() string { return "/_link/s/" + r.secret + "/mcp/" }

// ProxyChannel is a new channel for the sandbox's proxy to pass its
// tool calls' connections on (internal/connpass; netbroker.Config's
// ToolBridge): the bridge serves one end until Close and returns the
// other, for the proxy (handed to lnk-netbroker as an fd). The caller
// closes its copy once the proxy has it.
func (r *Running) ProxyChannel() (*os.File, error) {
	ch, send, err := connpass.ReceivingPair()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.channels = append(r.channels, ch)
	r.mu.Unlock()
	r.passed.Add(1)
	go func() {
		defer r.passed.Done()
		(&Server{Bridge: r.Bridge, Secret: r.secret}).ServePassed(ch)
	}()
	return send, nil
}

// Close stops serving, ends every session and removes the socket.
func (r *Running) Close() {
	r.ln.Close()
	<-r.served
	r.mu.Lock()
	for _, ch := range r.channels {
		ch.Close()
	}
	r.mu.Unlock()
	r.passed.Wait()
	r.Bridge.Close()
	unix.Unlinkat(int(r.dir.Fd()), r.name, 0)
	r.dir.Close()
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}
