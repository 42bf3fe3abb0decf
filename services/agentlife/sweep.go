package agentlife

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/procstat"
)

// sweepGroup SIGKILLs every process in group pgid that started no
// earlier than since (clock ticks after boot), and waits for each to
// end: what is left of a harness's group whose leader is gone, as after
// a supervisor killed with the harness's sandbox off. A process that started before the
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
	type proc struct {
		pid   int
		start uint64
	}
	var killed []proc
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil {
			continue // gone while read, or a zombie's half line
		}
		if st.PGID == pgid && st.Start >= since && st.State != 'Z' {
			if unix.Kill(pid, unix.SIGKILL) == nil {
				killed = append(killed, proc{pid, st.Start})
			}
		}
	}
	// A process dies some time after SIGKILL: the sweep ends once each
	// has (or after stopGrace, an error: one still there is said).
	end := time.Now().Add(stopGrace)
	for _, p := range killed {
		for alive(p.pid, p.start) {
			if time.Now().After(end) {
				return len(killed), fmt.Errorf("process %d of group %d still runs after SIGKILL", p.pid, pgid)
			}
			time.Sleep(stopPoll)
		}
	}
	return len(killed), nil
}

// alive says whether pid is still the process that started at start
// (clock ticks) in this boot, and has not ended (a zombie has).
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := procstat.Read(pid)
	return err == nil && st.Start == start && st.State != 'Z'
}
