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

// The broker's confinement, as data. Landlock: read and write beneath the
// store's folder alone; read and execute the dialog program and
// notify-send alone (each with its loader); read
// (never write or execute) what a dialog program loads — the system's
// files below — since the dialog inherits the broker's domain. Seccomp:
// the broker deny list, exec allowed (for the dialog), AF_UNIX sockets
// only (the dialog's X or Wayland connection).
var dialogReads = []string{"/usr", "/etc", "/var/cache/fontconfig", "/tmp/.X11-unix", "/dev/urandom"}

// dialogWrites are the files besides the store the broker may open for
// writing: /dev/null, a dialog's standard input and output.
var dialogWrites = []string{"/dev/null"}

// landlockReexecMarker is set in the re-executed broker (see
// internal/landlock), so a start is logged once, not twice.
const landlockReexecMarker = "LNK_LANDLOCK_REEXEC"

var brokerSeccomp = seccomp.Policy{Exec: true, Sockets: seccomp.SocketsUnix}

// confine applies landlock to the whole process (re-executing it once
// where the kernel cannot confine every thread at once: the fds in
// inherit survive that, inheritable until it is done), then seccomp.
func confine(programs []string, inherit []int, degraded bool, logf func(string)) error {
	dialog := programs[0]
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	openPath := func(p string) (int, bool) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, false
		}
		fds = append(fds, fd)
		return fd, true
	}
	rules := []landlock.Rule{landlock.Beneath(storeFD, landlock.Read|landlock.Write)}
	reads := dialogReads
	if x := os.Getenv("XAUTHORITY"); x != "" {
		reads = append(reads, x)
	}
	for _, p := range reads {
		if fd, ok := openPath(p); ok {
			rules = append(rules, landlock.Beneath(fd, landlock.Read))
		}
	}
	for _, p := range dialogWrites {
		if fd, ok := openPath(p); ok {
			rules = append(rules, landlock.Beneath(fd, landlock.Read|landlock.Write))
		}
	}
	for _, prog := range programs {
		if prog == "" {
			continue
		}
		for _, p := range []string{prog, interpreter(prog)} {
			if fd, ok := openPath(p); ok && p != "" {
				rules = append(rules, landlock.Beneath(fd, landlock.Read|landlock.Exec))
			}
		}
	}
	if dialog != "" && os.Getenv("DISPLAY") != "" {
		// libxcb connects to X's abstract socket first and does not fall
		// back to the path when that is refused, so an X dialog needs
		// landlock's scoping off (which also lets signals out). Loosened:
		// said at every start. The fix is a dialog launcher outside the
		// broker's domain.
		rules = append(rules, landlock.AllowOutsideSignals())
		if os.Getenv(landlockReexecMarker) == "" {
			logf("landlock: abstract sockets and signals not scoped, for an X dialog (" + dialog + ")")
		}
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
	if err := seccomp.ConfineBroker(brokerSeccomp); err != nil {
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
