package caps

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain checks, after a full run (no -run), that every rule in
// AllRules was hit by a named case: a rule without a test fails the run.
func TestMain(m *testing.M) {
	code := m.Run()
	full := flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" &&
		flag.Lookup("test.fuzz").Value.String() == ""
	if code == 0 && full && flag.Lookup("test.fuzzworker").Value.String() != "true" {
		for _, r := range AllRules {
			if !covered[r.Rule] {
				fmt.Fprintf(os.Stderr, "caps: rule %s has no test case\n", r.Rule)
				code = 1
			}
		}
	}
	os.Exit(code)
}
