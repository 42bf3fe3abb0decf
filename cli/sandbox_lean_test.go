package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// The built lnk serves `lnk sandbox run` from a tree holding that command
// alone (RunSandboxRun); whatever it prints and returns is what the whole
// tree (Main, in this test's process) prints and returns for the same
// command line: help, refused flags, a missing command, an unlisted
// program, an agent that does not exist.
func TestSandboxRunLeanIsTheWholeTree(t *testing.T) {
	lnkBin(t)
	testenv.Home(t)
	for _, args := range [][]string{
		{"sandbox", "run", "--help"},
		{"sandbox", "run", "-h"},
		{"sandbox", "run", "--bogus", "--", "/bin/true"},
		{"sandbox", "run"},
		{"sandbox", "run", "--internet=false", "--command", "true", "--", "/bin/no-such-program-here"},
		{"sandbox", "run", "--agent", "nobody", "--", "/bin/true"},
		{"sandbox", "run", "--agent", "nobody", "--read", "/tmp", "--", "/bin/true"},
	} {
		name := strings.Join(args, " ")
		if !IsSandboxRun(args) {
			t.Fatalf("%s: not taken for lnk sandbox run", name)
		}
		var out, errs bytes.Buffer
		code := Main(context.Background(), args, &out, &errs)
		binOut, binErr, binCode := lnkRun(t, nil, args...)
		if binCode != code || binOut != out.String() || binErr != errs.String() {
			t.Errorf("%s: lean path exit %d\n%s%s\nwhole tree exit %d\n%s%s", name, binCode, binOut, binErr, code, out.String(), errs.String())
		}
	}
	for _, args := range [][]string{{"sandbox"}, {"sandbox", "check"}, {"run", "sandbox"}, {"--help", "sandbox", "run"}, {}} {
		if IsSandboxRun(args) {
			t.Errorf("%q taken for lnk sandbox run", args)
		}
	}
}
