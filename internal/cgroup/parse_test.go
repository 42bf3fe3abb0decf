package cgroup

import (
	"strings"
	"testing"
)

const v1Cgroup = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/59d9\n1:cpu:/\n0::/\n"

const v1Mounts = `29 24 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
30 24 0:27 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
35 24 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestOwnPathAndFolder(t *testing.T) {
	v2, v1 := ownPath(v1Cgroup)
	if v2 != "/" || v1 != "/process_api/59d9" {
		t.Fatalf("ownPath = %q, %q", v2, v1)
	}
	m2, m1, ok2, ok1 := mounts(v1Mounts)
	if !ok2 || !ok1 || m2.point != "/sys/fs/cgroup/unified" || m1.point != "/sys/fs/cgroup/memory" {
		t.Fatalf("mounts = %+v %+v %v %v", m2, m1, ok2, ok1)
	}
	if f := folder(m1, v1); f != "/sys/fs/cgroup/memory/process_api/59d9" {
		t.Errorf("folder = %q", f)
	}
	// v2 alone, under systemd, a mount point with a space (\040), and a
	// co-mounted v1 hierarchy (cpu,memory).
	v2, v1 = ownPath("0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n")
	if v1 != "" || !strings.HasSuffix(v2, "x.scope") {
		t.Errorf("v2 ownPath = %q, %q", v2, v1)
	}
	m2, _, ok2, ok1 = mounts(`35 24 0:32 / /sys/fs/cg\040x rw - cgroup2 cgroup2 rw`)
	if !ok2 || ok1 || folder(m2, v2) != "/sys/fs/cg x/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope" {
		t.Errorf("v2 mounts = %+v %v %v", m2, ok2, ok1)
	}
	if _, v1 = ownPath("3:cpu,memory:/a\n"); v1 != "/a" {
		t.Errorf("co-mounted: %q", v1)
	}
	// A mount of another namespace's root holds only what is inside it;
	// a path that climbs is none.
	m := mount{root: "/a", point: "/sys/fs/cgroup"}
	for p, want := range map[string]string{"/a/b": "/sys/fs/cgroup/b", "/a": "/sys/fs/cgroup", "/ab": "", "/c": "", "/a/../b": ""} {
		if got := folder(m, p); got != want {
			t.Errorf("folder(%q) = %q, want %q", p, got, want)
		}
	}
	if _, ok := unescape(`\04`); ok {
		t.Error("a cut escape was taken")
	}
}

// FuzzCgroupFiles: whatever /proc/self/cgroup and mountinfo hold, the
// parsers never panic, and a folder found is absolute, under its mount
// point, and never climbs (..).
func FuzzCgroupFiles(f *testing.F) {
	f.Add(v1Cgroup, v1Mounts)
	f.Add("0::/a/../b\n", `1 1 0:1 /a /x\134 rw - cgroup2 c rw`)
	f.Fuzz(func(t *testing.T, cg, info string) {
		v2, v1 := ownPath(cg)
		m2, m1, ok2, ok1 := mounts(info)
		for _, c := range []struct {
			m  mount
			ok bool
			p  string
		}{{m2, ok2, v2}, {m1, ok1, v1}} {
			if !c.ok || c.p == "" {
				continue
			}
			d := folder(c.m, c.p)
			if d == "" {
				continue
			}
			if !strings.HasPrefix(d, "/") || !strings.HasPrefix(d, strings.TrimSuffix(c.m.point, "/")) || strings.Contains("/"+d+"/", "/../") {
				t.Fatalf("folder(%+v, %q) = %q", c.m, c.p, d)
			}
		}
	})
}

// BenchmarkDelegated is the detection every sandbox start pays, in
// whatever cgroup the benchmark runs.
func BenchmarkDelegated(b *testing.B) {
	for b.Loop() {
		g, _ := Delegated()
		g.Close()
	}
}
