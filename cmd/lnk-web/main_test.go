package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// Bad command lines: lnk-web says why on one line, names the lnk command
// that adds it right, and exits 2 before it serves.
func TestBadCommandLines(t *testing.T) {
	bin := testenv.Bin(t, "lnk-web")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--private-host", "user@intranet"}, "--private-host \"user@intranet\""},
		{[]string{"--private-host", "exa mple"}, "--private-host"},
		{[]string{"serve"}, "usage: lnk-web"},
		{[]string{"--privat-host", "x"}, "flag provided but not defined: -privat-host"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		var ee *exec.ExitError
		if !(err != nil && errors.As(err, &ee) && ee.ExitCode() == 2) || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "hint: lnk sandbox tool add web -- lnk-web") {
			t.Errorf("lnk-web %q: %v\n%s", c.args, err, out)
		}
	}
}
