package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A start's folder never reaches Link's own: checkFolder refuses, by its
// path, a folder that is or holds ~/.lnk (HOME, /, …), one inside it,
// one that holds ~/Link/Agents (every agent's folder), another agent's
// folder or one inside it, and ~/Link/History; heldRoot then refuses, by
// the opened folder itself, one that holds ~/.lnk or ~/Link/Agents under
// another name (a bind mount, a path spelled otherwise).

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

// checkFolder refuses path p (absolute and clean) as a folder of agent's
// start when it reaches Link's own folders or another agent's.
func (k *Kernel) checkFolder(agent, p string) error {
	home := k.opts.Home
	settings := filepath.Join(home, ".lnk")
	agents := filepath.Join(home, "Link", "Agents")
	switch {
	case within(settings, p):
		return fmt.Errorf("folder %s holds Link's settings (~/.lnk), which no agent is granted", p)
	case within(p, settings):
		return fmt.Errorf("folder %s holds Link's settings, which no agent is granted", p)
	case within(agents, p):
		return fmt.Errorf("folder %s holds every agent's folder (~/Link/Agents); an agent is granted its own alone", p)
	case within(p, agents) && agent == "":
		return fmt.Errorf("folder %s is an agent's, which a start of no agent is not granted", p)
	case within(p, agents) && !within(p, filepath.Join(agents, agent)):
		return fmt.Errorf("folder %s is another agent's, which agent %s is not granted", p, agent)
	case within(p, filepath.Join(home, "Link", "History")):
		return fmt.Errorf("folder %s is in ~/Link/History, which no agent is granted", p)
	}
	return nil
}

// heldRoot names the root of Link's (~/.lnk, ~/Link/Agents) that the
// open folder fd is or holds, or "" if none: it compares fd with each
// root and every folder above it, up to /.
func (k *Kernel) heldRoot(fd int) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	for _, r := range []struct {
		name string
		f    *os.File
	}{{"~/.lnk", k.roots.Lnk}, {"~/Link/Agents", k.roots.Agents}} {
		held, err := above(int(r.f.Fd()), st)
		if err != nil {
			return "", fmt.Errorf("%s: %w", r.name, err)
		}
		if held {
			return r.name, nil
		}
	}
	return "", nil
}

// above reports whether dir is the folder at fd or one above it.
func above(fd int, dir unix.Stat_t) (bool, error) {
	cur, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer func() { unix.Close(cur) }()
	for depth := 0; depth < 4096; depth++ {
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			return false, err
		}
		if st.Dev == dir.Dev && st.Ino == dir.Ino {
			return true, nil
		}
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, err
		}
		var ust unix.Stat_t
		if err := unix.Fstat(up, &ust); err != nil {
			unix.Close(up)
			return false, err
		}
		unix.Close(cur)
		cur = up
		if ust.Dev == st.Dev && ust.Ino == st.Ino { // / is its own parent
			return false, nil
		}
	}
	return false, fmt.Errorf("more than 4096 folders deep")
}
