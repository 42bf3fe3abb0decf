package runtool

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/sandboxrun"
)

// BenchmarkRunToolCallParts breaks a run call of `true` into its parts,
// each timed alone, all in turns in the same run so the machine's load
// falls on each alike:
//
//   - compile-ns/op: the run tool's compile of the agent's grants;
//   - dial-ns/op: a connection to the kernel (client.Dial) and its close;
//   - kernel-ns/op: the kernel's start of the agent (its own compile, the
//     folders' handles opened and passed) and its end;
//   - build-ns/op: the sandbox built from the grants (bubblewrap's
//     arguments, the plan, the folders' handles), not started;
//   - sandbox-ns/op: the built sandbox started and waited for, no kernel
//     (bubblewrap, its binds, the memory cgroup, lnk-init's Go start,
//     landlock, seccomp, the exec of true);
//   - noinit-ns/op: the same sandbox with /bin/true in lnk-init's place
//     (no Go start, no landlock or seccomp);
//   - hello-ns/op: the same sandbox with a Go hello in lnk-init's place
//     (a Go start, no landlock or seccomp, nothing exec'd after it);
//   - bwrap-hello-ns/op: bare bwrap with the call's namespaces running a
//     Go hello: the floor of any sandbox whose first stage is a Go
//     program;
//   - base-ns/op: bare bwrap with the same namespaces running /bin/true.
func BenchmarkRunToolCallParts(b *testing.B) {
	a := testAgent(b, "")
	hello := testenv.GoHello(b)
	ctx := context.Background()
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	run := func(argv ...string) {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v %s", argv, err, out)
		}
	}
	dial := func() *client.Client {
		cl, err := client.Dial(ctx, a.Home, a.Lnk)
		if err != nil {
			b.Fatal(err)
		}
		return cl
	}
	build := func(init string) *sandbox.Sandbox {
		comp, err := a.grants()
		if err != nil {
			b.Fatal(err)
		}
		s, err := sandbox.Build(comp, sandbox.Options{Argv: []string{"true"}, InitPath: init})
		if err != nil {
			b.Fatal(err)
		}
		s.Session = true
		return s
	}
	start := func(s *sandbox.Sandbox) {
		if code, err := s.Start(nil, io.Discard, io.Discard, nil); err != nil || code != 0 {
			b.Fatalf("the sandbox alone: %d %v", code, err)
		}
	}
	comp, err := a.grants()
	if err != nil {
		b.Fatal(err)
	}
	parts := []struct {
		name string
		f    func() time.Duration
	}{
		{"compile-ns/op", func() time.Duration {
			return timed(func() {
				if _, err := a.grants(); err != nil {
					b.Fatal(err)
				}
			})
		}},
		{"dial-ns/op", func() time.Duration { return timed(func() { dial().Close() }) }},
		{"kernel-ns/op", func() time.Duration {
			cl := dial()
			return timed(func() {
				ks, err := sandboxrun.StartAgent(ctx, cl, comp, a.Name, sandboxrun.Harness{})
				if err != nil {
					b.Fatal(err)
				}
				if err := ks.Finish(ctx); err != nil {
					b.Fatal(err)
				}
			})
		}},
		{"build-ns/op", func() time.Duration {
			var s *sandbox.Sandbox
			d := timed(func() { s = build(a.initPath()) })
			s.Close()
			return d
		}},
		{"sandbox-ns/op", func() time.Duration {
			s := build(a.initPath())
			return timed(func() { start(s) })
		}},
		{"noinit-ns/op", func() time.Duration {
			s := build("/bin/true")
			return timed(func() { start(s) })
		}},
		{"hello-ns/op", func() time.Duration {
			s := build(hello)
			return timed(func() { start(s) })
		}},
		{"bwrap-hello-ns/op", func() time.Duration {
			argv := append(append([]string(nil), bareBwrap[:len(bareBwrap)-1]...), hello)
			return timed(func() { run(argv...) })
		}},
		{"base-ns/op", func() time.Duration { return timed(func() { run(bareBwrap...) }) }},
	}
	got := make([][]time.Duration, len(parts))
	for _, p := range parts {
		p.f() // warm
	}
	for i := 0; i < max(15, b.N); i++ {
		for j, p := range parts {
			got[j] = append(got[j], p.f())
		}
	}
	for j, p := range parts {
		b.ReportMetric(median(got[j]), p.name)
	}
}
