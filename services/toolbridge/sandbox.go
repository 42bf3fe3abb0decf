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

	"golang.org/x/sys/unix"
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
	// Dir is the socket's folder, held open (O_PATH): the proxy dials
	// through it, never through a path under HOME.
	Dir *os.File

	secret string
	name   string
	ln     net.Listener
	served chan error
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
	fd, err := openBelow(h, []string{".lnk", "sandbox", "bridge"})
	unix.Close(h)
	if err != nil {
		return nil, err
	}
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
	r.Dir = os.NewFile(uintptr(fd), filepath.Dir(r.Socket))
	r.ln = ln
	go func() { r.served <- (&Server{Bridge: b, Secret: r.secret}).Serve(ln) }()
	return r, nil
}

// Name is the socket's name in Dir.
func (r *Running) Name() string { return r.name }

// Route is the path prefix a sandbox reaches its tools at through its
// proxy, "/_link/s/<secret>/mcp/": it goes only into the sandbox's
// environment ($LNK_TOOL_<NAME>), never into a log.
func (r *Running) Route() string { return "/_link/s/" + r.secret + "/mcp/" }

// Close stops serving, ends every session and removes the socket.
func (r *Running) Close() {
	r.ln.Close()
	<-r.served
	r.Bridge.Close()
	unix.Unlinkat(int(r.Dir.Fd()), r.name, 0)
	r.Dir.Close()
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// openBelow opens each of parts below the folder fd (left open), making
// each 0700 if missing, never following a link, and refusing a folder
// that isn't the owner's or that others can reach. It returns the last
// one's fd (O_PATH would not do: the socket is bound through it).
func openBelow(fd int, parts []string) (int, error) {
	fd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for i, part := range parts {
		what := filepath.Join(parts[:i+1]...)
		if err := unix.Mkdirat(fd, part, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return -1, fmt.Errorf("toolbridge: making %s: %w", what, err)
		}
		next, err := unix.Openat(fd, part, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("toolbridge: opening %s (a link is never followed): %w", what, err)
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
			unix.Close(fd)
			return -1, fmt.Errorf("toolbridge: %s must be the owner's and mode 0700 (it is %o)", what, st.Mode&0o777)
		}
	}
	return fd, nil
}
