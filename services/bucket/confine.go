package bucket

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
)

// reach is what one rclone child may touch besides the system's files:
// the folder it reads (a push's files folder), the folder it writes (a
// pull's), the one TCP port it connects to (0: none: Link's proxy's, or a
// loopback endpoint's; route.go), and the proxy variables that name that
// proxy.
type reach struct {
	read, write string
	port        uint16
	env         []string
}

// systemPaths are what rclone itself needs to run and to speak TLS: its
// program and libraries (read, execute), and the trust store's files
// (read). No resolver's file: rclone looks no name up, since it reaches
// its endpoint through Link's proxy by the name, or at a loopback
// address (route.go). A path missing here is left out.
var (
	systemExec = []string{"/usr", "/bin", "/lib", "/lib64"}
	systemRead = []string{"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/localtime", "/usr/share/zoneinfo"}
)

// startConfined starts cmd confined by landlock to r's reach: the
// system paths above, the program, its HOME and config (read and write
// HOME, read the config), rw.read (read), rw.write (read, write), and TCP
// connect to rw.port alone (Link's proxy's, or a loopback endpoint's); nothing else on disk, so a folder of the
// files folder an agent swaps for a link while rclone walks leads nowhere
// rclone may read. It runs on a thread of its own, locked and confined,
// which ends with the call; the Go process is never confined. A kernel
// without landlock refuses the start (fail closed).
func (r *runner) startConfined(cmd *exec.Cmd, rw reach) error {
	if landlock.ABI() == 0 {
		return fmt.Errorf("this kernel has no landlock, which confines rclone to the files it moves: %w", landlock.ErrUnsupported)
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	var rules []landlock.Rule
	add := func(path string, right landlock.Right, must bool) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if !must && errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("confining rclone: %s: %w", path, err)
		}
		fds = append(fds, fd)
		rules = append(rules, landlock.Beneath(fd, right))
		return nil
	}
	for _, p := range systemExec {
		if err := add(p, landlock.Read|landlock.Exec, false); err != nil {
			return err
		}
	}
	for _, p := range systemRead {
		if err := add(p, landlock.Read, false); err != nil {
			return err
		}
	}
	if err := add(cmd.Path, landlock.Read|landlock.Exec, true); err != nil {
		return err
	}
	if err := add("/dev/null", landlock.Read|landlock.Write, true); err != nil {
		return err
	}
	if err := add(r.home, landlock.Read|landlock.Write, true); err != nil {
		return err
	}
	if r.conf != nil {
		rules = append(rules, landlock.Beneath(int(r.conf.Fd()), landlock.Read))
	}
	if rw.read != "" {
		if err := add(rw.read, landlock.Read, true); err != nil {
			return err
		}
	}
	if rw.write != "" {
		if err := add(rw.write, landlock.Read|landlock.Write, true); err != nil {
			return err
		}
	}
	if rw.port != 0 {
		rules = append(rules, landlock.ConnectTCP(rw.port))
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: this thread is confined with the child it
		// forks, and ends with this goroutine.
		runtime.LockOSThread()
		if _, err := landlock.RestrictThread(rules...); err != nil {
			errc <- fmt.Errorf("confining rclone: %w", err)
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}
