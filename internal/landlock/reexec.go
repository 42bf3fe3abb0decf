package landlock

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// reexecMarker tells the re-executed program that its whole process
// already starts inside the domain.
const reexecMarker = "LNK_LANDLOCK_REEXEC"

// reexec replaces the process with itself, from the confined thread, so
// every thread of the new program inherits the domain.
func reexec() error {
	env := append(os.Environ(), reexecMarker+"=1")
	err := unix.Exec("/proc/self/exe", os.Args, env)
	return fmt.Errorf("landlock: re-exec to confine every thread: %w", err)
}

// selfRules opens what running this program once more needs: read and
// execute on the program and its ELF interpreter, read on every file it
// has mapped (its shared libraries) and on the loader's cache. The caller
// closes the fds.
func selfRules() ([]Rule, []int, error) {
	paths := map[string]Right{"/proc/self/exe": Read | Exec, "/etc/ld.so.cache": Read}
	if f, err := elf.Open("/proc/self/exe"); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				if _, err := p.ReadAt(b, 0); err == nil {
					paths[strings.TrimRight(string(b), "\x00")] = Read | Exec
				}
			}
		}
		f.Close()
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
