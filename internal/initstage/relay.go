package initstage

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/landlock"
)

// RelayArg is lnk-init's first argument when it runs as the relay.
const RelayArg = "relay"

// startRelay listens on 127.0.0.1:r.Port and starts this program as the
// relay with the listener as fd 3. The listener exists before the command
// starts, so the command never races the relay. The relay holds the
// armed lifeline (fd 4) for as long as it runs, if there is one (-1: none).
func startRelay(r *Relay, lifeline int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("relay: socket: %w", err)
	}
	defer unix.Close(fd)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(r.Port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("relay: listen on 127.0.0.1:%d: %w", r.Port, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("relay: listen: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	l := os.NewFile(uintptr(fd), "relay-listener")
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: this thread is confined as the relay and ends
		// with this goroutine, never running anything else of lnk-init's.
		runtime.LockOSThread()
		errc <- startConfined(exe, r.Socket, l, lifeline)
	}()
	return <-errc
}

// startConfined starts the relay from the calling (locked) thread after
// confining that thread as internal/landlock's Restrict would before its
// re-exec: no files but read and execute on this program, no TCP, scoped
// (where the kernel has landlock); then the sandbox's seccomp filter (where
// it has seccomp). The relay inherits both on every thread it will have,
// and confines its own thread once more as it starts (RunRelay).
func startConfined(exe, socket string, l *os.File, lifeline int) error {
	env := []string{}
	// The relay's stdin and stdout: Go's runtime would open /dev/null
	// for them itself, which the relay's domain no longer allows.
	null, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	defer null.Close()
	self, err := unix.Open("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("relay: open own program: %w", err)
	}
	_, err = landlock.RestrictThread(landlock.Beneath(self, landlock.Read|landlock.Exec))
	unix.Close(self)
	switch {
	case err == nil:
		env = append(env, landlock.BornConfined) // a second Go start spared on the command's path
	case !errors.Is(err, landlock.ErrUnsupported):
		return fmt.Errorf("relay: %w", err)
	}
	if err := loadFilter(); err != nil && !errors.Is(err, ErrNoSeccomp) {
		return fmt.Errorf("relay: %w", err)
	}
	files := []uintptr{null.Fd(), null.Fd(), 2, l.Fd()}
	if lifeline >= 0 {
		// Never closed by lnk-init: exec closes it there, and the relay
		// only holds it (the kernel signals, armLifeline).
		files = append(files, uintptr(lifeline))
	}
	// syscall.ForkExec, not os.StartProcess: lnk-init never waits for the
	// relay, and os's first start would first probe, with a child of its
	// own, whether clone hands back a pidfd, on the command's path.
	_, err = syscall.ForkExec("/proc/self/exe", []string{exe, RelayArg, socket}, &syscall.ProcAttr{
		Env:   env,
		Files: files,
	})
	runtime.KeepAlive(null)
	runtime.KeepAlive(l)
	if err != nil {
		return fmt.Errorf("relay: start: %w", err)
	}
	return nil
}

// RunRelay is the relay's main: confine itself (no files, no TCP connect or
// bind, scoped), then pass every connection on fd 3 to the proxy at
// socket.
func RunRelay(socket string) error {
	runtime.LockOSThread()
	// The relay holds 0–3 alone, and 4, lnk's lifeline, where lnk waits
	// beside the sandbox (held, never read: armLifeline): lnk-init marked
	// every other fd of its close-on-exec before starting it (cloexecFrom),
	// and the fds Go's runtime opens for itself stay open.
	lf := os.NewFile(3, "relay-listener")
	l, err := net.FileListener(lf)
	if err != nil {
		return fmt.Errorf("relay: listener: %w", err)
	}
	if _, err := landlock.Restrict(); err != nil && !errors.Is(err, landlock.ErrUnsupported) {
		return err
	}
	if err := loadFilter(); err != nil && !errors.Is(err, ErrNoSeccomp) {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return fmt.Errorf("relay: accept: %w", err)
		}
		go forward(c, socket)
	}
}

// forward passes one connection to the proxy: a connection of its own to
// the proxy's socket, carrying the marker byte and the connection's fd
// (internal/connpass), and then closes both. The proxy serves the
// sandbox's TCP connection itself, and no byte of it passes through the
// relay.
func forward(c net.Conn, socket string) {
	defer c.Close()
	u, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer u.Close()
	connpass.SendOnStream(u.(*net.UnixConn), c)
}
