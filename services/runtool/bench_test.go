package runtool

import (
	"context"
	"io"
	"os/exec"
	"sort"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/sandboxrun"
)

// bareBwrap is the baseline: bubblewrap with the same namespaces as a
// call's sandbox, running /bin/true.
var bareBwrap = []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true"}

// BenchmarkRunToolCallTrue times a run call of `true`, from its arrival
// at the run tool (its arguments decoded) to its answer, beside bare
// bwrap, in turns in the same run. The run tool is long-lived and runs
// each call in-process (services/sandboxrun): no start of lnk is paid
// per call. The floor is the same sandbox (the agent's grants, the same
// bubblewrap arguments and lnk-init, its own Go start inside) started
// in-process without the kernel: what the kernel's part costs is
// link-over-floor; gohello-ns/op is one Go start, lnk-init's share.
func BenchmarkRunToolCallTrue(b *testing.B) {
	a := testAgent(b, "")
	hello := testenv.GoHello(b)
	n := 15
	call := func() time.Duration {
		start := time.Now()
		res, err := a.Run(context.Background(), Call{Argv: []string{"true"}})
		if err != nil || res.Code != 0 {
			b.Fatalf("%+v %v", res, err)
		}
		return time.Since(start)
	}
	run := func(argv ...string) time.Duration {
		start := time.Now()
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v %s", argv, err, out)
		}
		return time.Since(start)
	}
	alone := func() time.Duration {
		start := time.Now()
		comp, err := a.grants()
		if err != nil {
			b.Fatal(err)
		}
		s, err := sandboxrun.Build(comp, []string{"true"}, "", a.initPath(), false, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.Session = true
		if code, err := s.Start(nil, io.Discard, io.Discard, nil); err != nil || code != 0 {
			b.Fatalf("the sandbox alone: %d %v", code, err)
		}
		return time.Since(start)
	}
	call()
	run(bareBwrap...)
	run(hello)
	alone()
	var link, base, h, floor []time.Duration
	for i := 0; i < max(n, b.N); i++ {
		link = append(link, call())
		base = append(base, run(bareBwrap...))
		h = append(h, run(hello))
		floor = append(floor, alone())
	}
	l, bb, g, f := median(link), median(base), median(h), median(floor)
	b.ReportMetric(l, "link-ns/op")
	b.ReportMetric(bb, "base-ns/op")
	b.ReportMetric(l/bb, "x-baseline")
	b.ReportMetric(g, "gohello-ns/op")
	b.ReportMetric(f, "floor-ns/op")
	b.ReportMetric(f/bb, "floor-x-baseline")
	b.ReportMetric(l/f, "link-over-floor")
}

func median(d []time.Duration) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Nanoseconds())
}
