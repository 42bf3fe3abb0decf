package toolbridge

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

// SECURITY.md's process map as the test reads it, and the check of the
// processes found against it (procmap_test.go).

// mapMarker is the line above the table of an agent's run in
// SECURITY.md; flagMapMarker the one above a run of flag grants'.
const (
	mapMarker     = "<!-- process map: read by services/toolbridge TestProcessMapMatchesSecurityMd -->"
	flagMapMarker = "<!-- process map of a run of flag grants: read by services/toolbridge TestProcessMapOfAFlagRun -->"
)

// A mapRow is one row of the table.
type mapRow struct {
	proc, parent string // match keys: a name (argv[0]'s base), then argv words it must hold
	optional     bool   // "with a display": may be absent
	lazy         bool   // "at a file request", "at a memory session": may be absent on any machine
	seccomp      bool
	noNewPrivs   bool
	landlock     bool // its column starts "yes": not readable from outside, but it implies no_new_privs
	dumpable     bool
	fds          map[string]bool
	line         int
}

var keyRe = regexp.MustCompile("`([^`]+)`")

// readProcessMap parses the table after marker in SECURITY.md.
func readProcessMap(text, marker string) ([]mapRow, error) {
	_, after, ok := strings.Cut(text, marker)
	if !ok {
		return nil, errors.New("SECURITY.md has no process map table (" + marker + ")")
	}
	first := strings.Count(text[:len(text)-len(after)], "\n") + 1
	var rows []mapRow
	sc := bufio.NewScanner(strings.NewReader(after))
	n := first - 1
	started := false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 8 {
			return nil, fmt.Errorf("SECURITY.md:%d: %d cells, want 8", n, len(cells))
		}
		if cells[0] == "process" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		yes := func(i int) (bool, error) {
			switch cells[i] {
			case "yes":
				return true, nil
			case "no":
				return false, nil
			}
			return false, fmt.Errorf("SECURITY.md:%d: cell %d is %q, want yes or no", n, i+1, cells[i])
		}
		r := mapRow{line: n, fds: map[string]bool{}}
		pm := keyRe.FindStringSubmatch(cells[0])
		if pm == nil {
			return nil, fmt.Errorf("SECURITY.md:%d: the process names no `key`", n)
		}
		r.proc = pm[1]
		if m := keyRe.FindStringSubmatch(cells[1]); m != nil {
			r.parent = m[1]
		}
		switch cells[2] {
		case "always":
		case "with a display":
			r.optional = true
		case "at a file request", "at a memory session":
			r.lazy = true
		default:
			return nil, fmt.Errorf("SECURITY.md:%d: runs %q, want always, with a display, at a file request or at a memory session", n, cells[2])
		}
		var err error
		for i, p := range []*bool{&r.seccomp, &r.noNewPrivs, &r.dumpable} {
			if *p, err = yes(3 + i); err != nil {
				return nil, err
			}
		}
		r.landlock = strings.HasPrefix(cells[6], "yes")
		for _, m := range keyRe.FindAllStringSubmatch(cells[7], -1) {
			r.fds[m[1]] = true
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("SECURITY.md's process map table has no rows")
	}
	return rows, nil
}

// matches reports whether key (a name, then words argv must hold) names p.
func (p *liveProc) matches(key string) bool {
	words := strings.Fields(key)
	if len(words) == 0 || p.name != words[0] {
		return false
	}
	for _, w := range words[1:] {
		found := false
		for _, a := range p.argv[1:] {
			if a == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// rowOf is the most specific row naming p with a parent naming pp.
func rowOf(rows []mapRow, p, pp *liveProc) *mapRow {
	var best *mapRow
	for i := range rows {
		r := &rows[i]
		if !p.matches(r.proc) {
			continue
		}
		if pp == nil != (r.parent == "") || pp != nil && !pp.matches(r.parent) {
			continue
		}
		if best == nil || len(strings.Fields(r.proc)) > len(strings.Fields(best.proc)) {
			best = r
		}
	}
	return best
}

// checkProcessMap is every way procs (each walk's root before its
// children) differ from rows; on
// a desktop the rows "with a display" must run too.
func checkProcessMap(rows []mapRow, procs []*liveProc, desktop bool) []string {
	var bad []string
	byPid := map[int]*liveProc{}
	for _, p := range procs {
		byPid[p.pid] = p
	}
	seen := map[*mapRow]bool{}
	for _, p := range procs {
		pp := byPid[p.ppid] // nil for a root of the walk (lnk, the kernel)
		r := rowOf(rows, p, pp)
		if r == nil {
			parent := "(none)"
			if pp != nil {
				parent = pp.name
			}
			bad = append(bad, fmt.Sprintf("process %d %q (parent %s) is in no row of the map", p.pid, strings.Join(p.argv, " "), parent))
			continue
		}
		seen[r] = true
		for _, c := range []struct {
			what      string
			got, want bool
		}{{"seccomp", p.seccomp, r.seccomp}, {"no_new_privs", p.noNewPrivs, r.noNewPrivs}, {"dumpable", p.dumpable, r.dumpable}} {
			if c.got != c.want {
				bad = append(bad, fmt.Sprintf("%s (pid %d, SECURITY.md:%d): %s is %v, the map says %v", r.proc, p.pid, r.line, c.what, c.got, c.want))
			}
		}
		if r.landlock && !p.noNewPrivs {
			// An unprivileged process enters a landlock domain only under
			// no_new_privs: without it the map's landlock cannot hold.
			bad = append(bad, fmt.Sprintf("%s (pid %d, SECURITY.md:%d): the map says landlock, and it runs without no_new_privs", r.proc, p.pid, r.line))
		}
		if p.fds == nil {
			// Only an undumpable process's fds are kept from its owner.
			if r.dumpable || !errors.Is(p.fdsErr, fs.ErrPermission) {
				bad = append(bad, fmt.Sprintf("%s (pid %d): its fds could not be read: %v", r.proc, p.pid, p.fdsErr))
			}
			continue
		}
		for k := range p.fds {
			if !r.fds[k] {
				bad = append(bad, fmt.Sprintf("%s (pid %d, SECURITY.md:%d) holds an fd of kind %s the map does not allow", r.proc, p.pid, r.line, k))
			}
		}
	}
	for i := range rows {
		if r := &rows[i]; !seen[r] && !r.lazy && (!r.optional || desktop) {
			bad = append(bad, fmt.Sprintf("%s under %s (SECURITY.md:%d) is not running", r.proc, r.parent, r.line))
		}
	}
	return bad
}
