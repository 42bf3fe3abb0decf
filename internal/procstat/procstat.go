package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrGone is returned, wrapped, for a pid no process has now.
var ErrGone = errors.New("no such process")

// Stat is what Link reads of a process's /proc/PID/stat.
type Stat struct {
	State byte // field 3: R, S, D, Z (ended, not yet reaped), …
	PPID  int
	PGID  int
	SID   int
	Start uint64 // clock ticks after boot (field 22)
}

// Read reads pid's stat.
func Read(pid int) (Stat, error) {
	if pid <= 0 {
		return Stat{}, fmt.Errorf("pid %d is no process", pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	if err != nil {
		return Stat{}, err
	}
	return Parse(b)
}

// Parse reads a /proc/PID/stat. The command, which may hold any byte
// (a process names itself), is skipped up to its last ')'.
func Parse(stat []byte) (Stat, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Stat{}, errors.New("no command in the stat")
	}
	f := bytes.Fields(stat[i+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 20 {
		return Stat{}, errors.New("a short stat")
	}
	s := Stat{State: f[0][0]}
	var err error
	for _, x := range []struct {
		field int
		to    *int
	}{{4, &s.PPID}, {5, &s.PGID}, {6, &s.SID}} {
		if *x.to, err = strconv.Atoi(string(f[x.field-3])); err != nil || *x.to < 0 {
			return Stat{}, fmt.Errorf("the stat's field %d %q is no pid", x.field, f[x.field-3])
		}
	}
	if s.Start, err = strconv.ParseUint(string(f[22-3]), 10, 64); err != nil {
		return Stat{}, fmt.Errorf("the stat's start time %q is no number", f[22-3])
	}
	return s, nil
}

// BootID is this boot's ID, which changes at every boot.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if len(id) != 36 {
		return "", fmt.Errorf("boot_id %q is not a UUID", id)
	}
	return id, nil
}
