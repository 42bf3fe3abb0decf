package runtool

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// bareBwrap is the baseline: bubblewrap with the same namespaces as a
// call's sandbox, running /bin/true.
var bareBwrap = []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true"}

// BenchmarkRunToolCallTrue times a run call of `true`, from its arrival
// at the run tool (its arguments decoded) to its answer, beside bare
// bwrap, in turns in the same run. The run tool is long-lived: no start
// of its own is paid per call, but each call is `lnk sandbox run --agent`
// (the CLI's own path), so lnk's start and its compile of the agent's
// grants are, and lnk-init's inside: the floor is bare bwrap and two Go
// starts (gohello-ns/op each).
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
	call()
	run(bareBwrap...)
	run(hello)
	var link, base, h []time.Duration
	for i := 0; i < max(n, b.N); i++ {
		link = append(link, call())
		base = append(base, run(bareBwrap...))
		h = append(h, run(hello))
	}
	l, bb, g := median(link), median(base), median(h)
	b.ReportMetric(l, "link-ns/op")
	b.ReportMetric(bb, "base-ns/op")
	b.ReportMetric(l/bb, "x-baseline")
	b.ReportMetric(g, "gohello-ns/op")
	b.ReportMetric((bb+2*g)/bb, "floor-x-baseline")
	b.ReportMetric(l/(bb+2*g), "link-over-floor")
}

func median(d []time.Duration) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2].Nanoseconds())
}
