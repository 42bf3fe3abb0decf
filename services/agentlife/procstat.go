package agentlife

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat is what the supervisor needs of /proc/PID/stat: the process's
// group and when it started (clock ticks after boot), which together
// with the boot's ID tell one process from a later one given its pid.
type procStat struct {
	State byte // R, S, D, Z (a zombie: ended, not yet reaped), …
	PGID  int
	Start uint64
}

// parseStat reads a /proc/PID/stat line. The command name, in
// parentheses, may hold anything, spaces and ')' too: the fields are
// counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("no ')' in /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ppid(4) pgrp(5) … starttime(22).
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc stat has %d fields after the name, want at least 20", len(f))
	}
	pgid, err := strconv.Atoi(f[2])
	if err != nil || pgid < 0 {
		return procStat{}, fmt.Errorf("/proc stat: pgrp %q", f[2])
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("/proc stat: starttime %q", f[19])
	}
	return procStat{State: f[0][0], PGID: pgid, Start: start}, nil
}

// statOf reads pid's stat; os.ErrNotExist when no such process.
func statOf(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// bootID is this boot's ID: a record from another boot names no process.
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// alive says whether pid is still the process that started at start
// (clock ticks) in this boot, and has not ended (a zombie has).
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := statOf(pid)
	return err == nil && st.Start == start && st.State != 'Z'
}
