package agentlife

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// sweepGroup SIGKILLs every process in group pgid that started no
// earlier than since (clock ticks after boot): what is left of a
// harness's group whose leader is gone, as after a supervisor killed
// with the harness's sandbox off. A process that started before the
// harness, or in another group, is never signalled. It returns how many
// it signalled; an unreadable /proc is an error (fail closed: the caller
// says nothing could be checked).
func sweepGroup(pgid int, since uint64) (int, error) {
	if pgid <= 1 {
		return 0, nil
	}
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		st, err := statOf(pid)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			continue // gone while read, or a zombie's half line
		}
		if st.PGID == pgid && st.Start >= since {
			if unix.Kill(pid, unix.SIGKILL) == nil {
				n++
			}
		}
	}
	return n, nil
}
