package initstage_test

import (
	"path/filepath"
	"testing"

	"lnk.dev/lnk/internal/initstage"
)

// FuzzParsePlan: any bytes either fail with ErrBadPlan or give a plan
// whose command and paths are absolute and clean, and that encodes and
// parses back the same.
func FuzzParsePlan(f *testing.F) {
	f.Add(plan(`lnk-plan 1|arg|/bin/sh|arg|-c|arg|true|rule|rx|/usr|rule|rw|/tmp|`))
	f.Add(plan(`lnk-plan 1|path|/usr/bin/true|arg|true|relay|3128|connect|3128|anytcp|degraded|`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := initstage.ParsePlan(b)
		if err != nil {
			return
		}
		if !filepath.IsAbs(p.Path) || len(p.Argv) == 0 {
			t.Fatalf("relative command %q accepted", p.Path)
		}
		for _, r := range p.Paths {
			if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
				t.Fatalf("path %q accepted", r.Path)
			}
		}
		again, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := initstage.ParsePlan(again); err != nil {
			t.Fatalf("a plan that parsed does not parse again: %v", err)
		}
	})
}
