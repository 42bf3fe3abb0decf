package probe

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/execinterp"
)

// The ways past [commands] that execute no file the sandbox was given the
// execute right on: the ELF loader mapping a copy it was told to run,
// and a memfd exec'd through /proc/self/fd.

// loaderOf is the ELF interpreter (ld.so) of program, or "".
func loaderOf(program string) string {
	f, err := os.Open(program)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, execinterp.MaxHead)
	n, _ := f.ReadAt(head, 0)
	_, interp := execinterp.Of(head[:n])
	return interp
}

// ldsoArg joins the loader, the program it is given and the folder the
// program is copied into first ("" to run it where it is).
func ldsoArg(loader, program, dir string) string {
	return strings.Join([]string{loader, program, dir}, "\x00")
}

// ldsoVerdict runs arg's loader on its program (copied into its folder
// first, when it names one): Open if the program ran; Closed if the
// loader could not map it executable (a noexec mount) or could not be
// run itself for landlock (EACCES); Broken otherwise, or if the program
// could not be copied.
func ldsoVerdict(arg string) (string, string) {
	parts := strings.Split(arg, "\x00")
	if len(parts) != 3 || parts[0] == "" {
		return Broken, "no ELF loader found for the program"
	}
	loader, program, dir := parts[0], parts[1], parts[2]
	if dir != "" {
		b, err := os.ReadFile(program)
		if err != nil {
			return Broken, "could not read the program: " + err.Error()
		}
		copied := filepath.Join(dir, ".lnk-probe-ld-"+strconv.Itoa(os.Getpid()))
		if err := os.WriteFile(copied, b, 0o600); err != nil { // not even executable: ld.so only maps it
			return Broken, "could not copy it: " + err.Error()
		}
		defer os.Remove(copied)
		program = copied
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, loader, program)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return Open, "the loader ran " + program
	case errors.As(err, &ee) && strings.Contains(out.String(), "failed to map segment"):
		return Closed, strings.TrimSpace(out.String())
	case errors.Is(err, unix.EACCES):
		return Closed, err.Error()
	}
	return Broken, "neither ran nor was refused: " + err.Error() + ": " + strings.TrimSpace(out.String())
}

// memfdVerdict copies program into a memfd, made with no flag and with
// MFD_EXEC, and execs each through /proc/self/fd: Open if either ran;
// Closed if each was refused, made (ENOSYS, EPERM, EINVAL) or run
// (EACCES, EPERM).
func memfdVerdict(program string) (string, string) {
	b, err := os.ReadFile(program)
	if err != nil {
		return Broken, "could not read the program: " + err.Error()
	}
	var why []string
	for _, fl := range []struct {
		name  string
		flags int
	}{{"no flag", 0}, {"MFD_EXEC", unix.MFD_EXEC}} {
		fd, err := unix.MemfdCreate("lnk-probe", unix.MFD_CLOEXEC|fl.flags)
		if err != nil {
			if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
				return Broken, "memfd_create (" + fl.name + "): " + err.Error()
			}
			why = append(why, "memfd_create ("+fl.name+"): "+err.Error())
			continue
		}
		got, detail := runMemfd(fd, b)
		unix.Close(fd)
		if got != Closed {
			return got, fl.name + ": " + detail
		}
		why = append(why, "exec ("+fl.name+"): "+detail)
	}
	return Closed, strings.Join(why, "; ")
}

// runMemfd writes b into memfd fd, makes it executable and execs it.
func runMemfd(fd int, b []byte) (string, string) {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return Broken, "write: " + err.Error()
		}
		b = b[n:]
	}
	unix.Fchmod(fd, 0o700) // refused where sealed noexec: the exec then says so
	cmd := exec.Command("/proc/self/fd/" + strconv.Itoa(fd))
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil || errors.As(err, &ee):
		return Open, "a memfd ran"
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return Closed, err.Error()
	}
	return Broken, "neither ran nor was refused: " + err.Error()
}

// memfdSealed makes a memfd sealed noexec: the control, which a sandbox
// allows.
func memfdSealed() (string, string) {
	fd, err := unix.MemfdCreate("lnk-probe", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
	if err != nil {
		return Closed, err.Error()
	}
	unix.Close(fd)
	return Open, ""
}
