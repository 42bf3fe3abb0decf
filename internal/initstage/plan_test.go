package initstage_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/initstage"
)

// plan spells an encoded plan with '|' for each NUL.
func plan(s string) []byte { return []byte(strings.ReplaceAll(s, "|", "\x00")) }

func TestParsePlanRefuses(t *testing.T) {
	for _, bad := range []string{
		``, `|`, `lnk-plan 1|`, `lnk-plan 2|arg|/bin/sh|`, `{"argv":["/bin/sh"]}`,
		`lnk-plan 1|arg|sh|`,
		`lnk-plan 1|arg|/bin/sh`,
		`lnk-plan 1|arg|/bin/sh|rule|r|usr|`,
		`lnk-plan 1|arg|/bin/sh|rule|r|/usr/../etc|`,
		`lnk-plan 1|arg|/bin/sh|rule||/usr|`,
		`lnk-plan 1|arg|/bin/sh|rule|o|/usr|`,
		`lnk-plan 1|arg|/bin/sh|rule|wr|/usr|`,
		`lnk-plan 1|arg|/bin/sh|rule|rr|/usr|`,
		`lnk-plan 1|arg|/bin/sh|rule|r|`,
		`lnk-plan 1|arg|/bin/sh|relay|0|`,
		`lnk-plan 1|arg|/bin/sh|relay|`,
		`lnk-plan 1|arg|/bin/sh|relay|1|/s|`,
		`lnk-plan 1|arg|/bin/sh|relay|1|relay|2|`,
		`lnk-plan 1|arg|/bin/sh|connect|65536|`,
		`lnk-plan 1|arg|/bin/sh|connect|080|`,
		`lnk-plan 1|arg|/bin/sh|connect|+8|`,
		`lnk-plan 1|arg|/bin/sh|path|/bin/sh|path|/bin/sh|`,
		`lnk-plan 1|arg|/bin/sh|exec|`,
		`lnk-plan 1|arg|/bin/sh|noexec|`,
		`lnk-plan 1|arg|/bin/sh|noexec|tmp|`,
		`lnk-plan 1|arg|/bin/sh|noexec|/tmp/../etc|`,
		`lnk-plan 1|arg|/bin/sh|procs|pidmax|`,
		`lnk-plan 1|arg|/bin/sh|procs|cgroup|4096|`,
		`lnk-plan 1|arg|/bin/sh|procs|pidmax|0|`,
		`lnk-plan 1|arg|/bin/sh|procs|pidmax|04096|`,
		`lnk-plan 1|arg|/bin/sh|procs|rlimit|4194305|`,
		`lnk-plan 1|arg|/bin/sh|procs|pidmax|4096|procs|rlimit|4096|`,
		`lnk-plan 1|arg|/bin/sh|` + strings.Repeat("arg|x|", initstage.MaxPlan/6),
	} {
		if _, err := initstage.ParsePlan(plan(bad)); !errors.Is(err, initstage.ErrBadPlan) {
			t.Errorf("%.60q: got %v, want ErrBadPlan", bad, err)
		}
	}
}

// TestPlanRoundTrip: every field lnk sets reaches lnk-init as it was.
func TestPlanRoundTrip(t *testing.T) {
	want := &initstage.Plan{
		Path: "/usr/bin/sh", Argv: []string{"sh", "-c", "echo 'a\nb' \"\\\"", ""},
		Paths: []initstage.PathRule{
			{Path: "/usr", Read: true},
			{Path: "/home/o/data", Read: true, Write: true},
			{Path: "/usr/bin/git", Read: true, Exec: true, Optional: true},
			{Path: "/home/o/ünï cødé", Write: true, Exec: true},
		},
		ConnectTCP: []uint16{3128, 1}, BindTCP: []uint16{65535}, AnyTCP: true,
		Relay: &initstage.Relay{Port: 3128}, Degraded: true,
		NoExec: []string{"/tmp", "/dev", "/home/o/data"}, MaxProcs: 4096, ProcsBy: initstage.ProcsPidMax,
	}
	b, err := want.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := initstage.ParsePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := (&initstage.Plan{Argv: []string{"/bin/sh", "a\x00b"}}).Encode(); err == nil {
		t.Fatal("an argument holding a NUL was encoded")
	}
}
