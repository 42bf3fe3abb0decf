package execinterp_test

import (
	"os"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/execinterp"
	"lnk.dev/lnk/internal/testenv"
)

func TestInterpreterOfRealPrograms(t *testing.T) {
	head := make([]byte, execinterp.MaxHead)
	f, err := os.Open("/bin/sh")
	testenv.Require(t, err == nil, "/bin/sh")
	n, _ := f.Read(head)
	f.Close()
	if _, interp := execinterp.Of(head[:n]); !strings.HasPrefix(interp, "/") {
		t.Fatalf("/bin/sh: no ELF interpreter found (%q)", interp)
	}
	if fields, _ := execinterp.Of([]byte("#!/usr/bin/env python3 -u\nprint()")); strings.Join(fields, " ") != "/usr/bin/env python3 -u" {
		t.Fatalf("shebang: %q", fields)
	}
}

// FuzzInterpreterOf: the head of a program the agent may have written
// never panics the parser, and what it names is an absolute path.
func FuzzInterpreterOf(f *testing.F) {
	f.Add([]byte("#!/bin/sh\nexit 0\n"))
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > execinterp.MaxHead {
			b = b[:execinterp.MaxHead]
		}
		_, interp := execinterp.Of(b)
		if interp != "" && !strings.HasPrefix(interp, "/") {
			t.Fatalf("relative interpreter %q", interp)
		}
	})
}
