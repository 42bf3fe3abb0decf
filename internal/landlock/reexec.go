package landlock

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/execinterp"
)

// reexecMarker tells the re-executed program that its whole process
// already starts inside the domain.
const reexecMarker = "LNK_LANDLOCK_REEXEC"

// BornConfined is the environment entry for a program started from a
// thread already inside its domain (so every thread it will have is):
// its Restrict confines its own thread again rather than executing
// itself a second time, as after the re-exec.
const BornConfined = reexecMarker + "=1"

// reexec replaces the process with itself, from the confined thread, so
// every thread of the new program inherits the domain.
func reexec() error {
	env := append(os.Environ(), BornConfined)
	if startPdeathsig != 0 {
		env = append(env, fmt.Sprintf("%s=%d:%d", pdeathEnv, startPdeathsig, os.Getppid()))
	}
	err := unix.Exec("/proc/self/exe", os.Args, env)
	return fmt.Errorf("landlock: re-exec to confine every thread: %w", err)
}

// selfRules opens what running this program once more needs: read and
// execute on the program and its ELF interpreter, read on every file it
// has mapped (its shared libraries) and on the loader's cache. The caller
// closes the fds.
func selfRules() ([]Rule, []int, error) {
	paths := map[string]Right{"/proc/self/exe": Read | Exec, "/etc/ld.so.cache": Read}
	if interp := ownInterpreter(); interp != "" {
		paths[interp] = Read | Exec
	}
	if m, err := os.Open("/proc/self/maps"); err == nil {
		s := bufio.NewScanner(m)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) == 6 && strings.HasPrefix(fields[5], "/") {
				if _, ok := paths[fields[5]]; !ok {
					paths[fields[5]] = Read
				}
			}
		}
		m.Close()
	}
	var rules []Rule
	var fds []int
	for p, r := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if p == "/proc/self/exe" {
				return nil, fds, fmt.Errorf("landlock: open own program: %w", err)
			}
			continue // not there (a static program has no cache, no interpreter)
		}
		fds = append(fds, fd)
		rules = append(rules, Beneath(fd, r))
	}
	return rules, fds, nil
}

// ownInterpreter is this program's ELF interpreter (its dynamic loader),
// read from the first page of /proc/self/exe; "" for a static program.
func ownInterpreter() string {
	fd, err := unix.Open("/proc/self/exe", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	var head [execinterp.MaxHead]byte
	n, err := unix.Pread(fd, head[:], 0)
	if err != nil || n <= 0 {
		return ""
	}
	_, interp := execinterp.Of(head[:n])
	return interp
}
