package toolbridge

import (
	"regexp"
	"testing"
)

// oneRunNet is the name of a start of no agent's proxy folder under
// ~/.lnk/agents/.net (helpers/netbroker.Listen: run-<24 hex digits>),
// as the map writes it.
var oneRunNet = regexp.MustCompile(`(/\.net/)run-[0-9a-f]{24}`)

// wrongFlagMaps: wrong copies of the flag run's map each fail against
// the same processes (the negative controls).
func wrongFlagMaps(t *testing.T, rows []mapRow, procs []*liveProc) {
	t.Helper()
	wrong := func(what string, change func([]mapRow) []mapRow) {
		t.Helper()
		cp := make([]mapRow, len(rows))
		for i, r := range rows {
			cp[i] = r
			cp[i].fds = map[string]bool{}
			for k := range r.fds {
				cp[i].fds[k] = true
			}
		}
		if bad := checkProcessMap(change(cp), procs, false); len(bad) == 0 {
			t.Errorf("a flag run's map with %s passed", what)
		}
	}
	set := func(key string, f func(*mapRow)) func([]mapRow) []mapRow {
		return func(rs []mapRow) []mapRow {
			for i := range rs {
				if rs[i].proc == key {
					f(&rs[i])
					return rs
				}
			}
			t.Fatalf("the flag run's map has no row %s", key)
			return rs
		}
	}
	wrong("lnk-netbroker under lnk", set("lnk-netbroker", func(r *mapRow) { r.parent = "lnk sandbox run" }))
	wrong("lnk-toolbridge under lnk", set("lnk-toolbridge", func(r *mapRow) { r.parent = "lnk sandbox run" }))
	wrong("lnk-askbroker under lnk", set("lnk-askbroker", func(r *mapRow) { r.parent = "lnk sandbox run" }))
	wrong("the tool's server under lnk", set("mcp-server", func(r *mapRow) { r.parent = "lnk sandbox run" }))
	wrong("lnk-toolbridge without seccomp", set("lnk-toolbridge", func(r *mapRow) { r.seccomp = false }))
	wrong("lnk-netbroker dumpable", set("lnk-netbroker", func(r *mapRow) { r.dumpable = true }))
	// An undumpable process's fds are its owner's to read only as root:
	// the sandboxed command's, dumpable, are read either way.
	wrong("the sandboxed command's pipes not allowed", set("client mcp-hold", func(r *mapRow) { delete(r.fds, "pipe") }))
	wrong("a key broker of an agent's sealed secrets running", func(rs []mapRow) []mapRow {
		return append(rs, mapRow{proc: "lnk-keybroker --agent", parent: "lnk kernel run", seccomp: true, noNewPrivs: true, fds: map[string]bool{}})
	})
}
