package probe_test

import (
	"bytes"
	"strings"
	"testing"

	"lnk.dev/lnk/kernel/sandbox/probe"
)

func TestFailedJudgesClosedProbesAndControls(t *testing.T) {
	r := func(expect, got string) probe.Result {
		return probe.Result{Probe: probe.Probe{Name: "p", Expect: expect}, Got: got}
	}
	for _, c := range []struct {
		rs     []probe.Result
		failed bool
	}{
		{[]probe.Result{r(probe.Closed, probe.Closed), r(probe.Open, probe.Open)}, false},
		{[]probe.Result{r(probe.Closed, probe.Open)}, true}, // a way out is open
		{[]probe.Result{r(probe.Open, probe.Closed)}, true}, // a broken control
		{[]probe.Result{r(probe.Gap, probe.Open), r(probe.Gap, "skipped")}, false},
		{[]probe.Result{r(probe.Closed, "skipped")}, false},
		{[]probe.Result{r(probe.Gap, probe.Broken)}, true}, // a probe that could not try proves nothing
	} {
		if got := probe.Failed(c.rs); got != c.failed {
			t.Errorf("%+v: Failed = %v, want %v", c.rs, got, c.failed)
		}
	}
	var b bytes.Buffer
	probe.Table(&b, []probe.Result{r(probe.Closed, probe.Closed), r(probe.Closed, probe.Open)})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "PROBE") || !strings.Contains(lines[1], "FAIL") {
		t.Fatalf("table (failures first):\n%s", b.String())
	}
}
