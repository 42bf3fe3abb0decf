package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/seccomp"
)

// A confinement is what one of the two processes may still do, as data.
type confinement struct {
	writable []int    // fds beneath which it may read and write
	programs []string // the only programs it may execute (with their loader)
	system   bool     // read the system's files a dialog loads; write /dev/null
	unscoped bool     // leave abstract sockets and signals unscoped (an X dialog)
	seccomp  seccomp.Policy
}

// brokerConfinement: the broker reads and writes its store and nothing
// else, executes nothing, and makes no socket: it reaches the kernel and
// the launcher over the fds it was handed.
var brokerConfinement = confinement{
	writable: []int{storeFD},
	seccomp:  seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone},
}

// launcherConfinement: the launcher executes only the dialog program and
// notify-send found at its start, reads the system's files they load,
// never the store or HOME, and makes AF_UNIX sockets only (X, Wayland,
// D-Bus).
func launcherConfinement(programs []string) confinement {
	return confinement{
		programs: programs,
		system:   true,
		unscoped: os.Getenv("DISPLAY") != "",
		seccomp:  seccomp.Policy{Exec: true, Sockets: seccomp.SocketsUnix},
	}
}

// systemReads are the system's files a dialog program loads; systemWrites
// the files besides a store it opens for writing (its standard streams).
var (
	systemReads  = []string{"/usr", "/etc", "/var/cache/fontconfig", "/tmp/.X11-unix", "/dev/urandom"}
	systemWrites = []string{"/dev/null"}
)

// landlockReexecMarker is set in a re-executed process (see
// internal/landlock), so a start is logged once, not twice.
const landlockReexecMarker = "LNK_LANDLOCK_REEXEC"

// apply confines the whole process with landlock (re-executing it once
// where the kernel cannot confine every thread at once: the fds in
// inherit survive that, inheritable until it is done), then seccomp.
func (c confinement) apply(inherit []int, degraded bool, logf func(string)) error {
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	var rules []landlock.Rule
	add := func(p string, r landlock.Right) {
		if p == "" {
			return
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		fds = append(fds, fd)
		rules = append(rules, landlock.Beneath(fd, r))
	}
	for _, fd := range c.writable {
		rules = append(rules, landlock.Beneath(fd, landlock.Read|landlock.Write))
	}
	if c.system {
		for _, p := range systemReads {
			add(p, landlock.Read)
		}
		add(os.Getenv("XAUTHORITY"), landlock.Read)
		for _, p := range systemWrites {
			add(p, landlock.Read|landlock.Write)
		}
	}
	for _, p := range c.programs {
		if p != "" {
			add(p, landlock.Read|landlock.Exec)
			add(interpreter(p), landlock.Read|landlock.Exec)
		}
	}
	if c.unscoped {
		// libxcb connects to X's abstract socket first and does not fall
		// back to the path when that is refused, so an X dialog needs
		// landlock's scoping off. Loosened: said at every start.
		rules = append(rules, landlock.AllowOutsideSignals())
		if os.Getenv(landlockReexecMarker) == "" {
			logf("landlock: abstract sockets and signals not scoped, for an X dialog")
		}
	}
	if len(rules) == 0 {
		// A domain with no rule at all: nothing of the file system is left.
		add("/dev/null", landlock.Read)
	}
	for _, fd := range inherit {
		unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0) // for landlock's re-exec
	}
	_, err := landlock.Restrict(rules...)
	for _, fd := range inherit {
		unix.CloseOnExec(fd)
	}
	if err != nil {
		if !degraded || !errors.Is(err, landlock.ErrUnsupported) {
			return fmt.Errorf("landlock: %w (--degraded runs without it)", err)
		}
		logf("degraded: no landlock: " + err.Error())
	}
	if err := seccomp.ConfineBroker(c.seccomp); err != nil {
		if !degraded {
			return fmt.Errorf("seccomp: %w (--degraded runs without it)", err)
		}
		logf("degraded: no seccomp: " + err.Error())
	}
	return nil
}

// interpreter is the ELF interpreter (the dynamic loader) prog names,
// which exec opens with execute rights too; empty for none.
func interpreter(prog string) string {
	f, err := elf.Open(prog)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP && p.Filesz < 4096 {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	return ""
}
