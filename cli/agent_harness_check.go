package cli

import (
	"os"

	"github.com/spf13/cobra"
)

// lnk agent harness check AGENT [--harness HARNESS] [--json]: lnk sandbox
// check's probes in the harness's own sandbox (agent_harness.go), under
// the profile <harness>-check. Refused while the agent's sandbox is off:
// there is no sandbox to check, and saying none was found open would
// claim one.

func init() {
	register("agent harness", func() *cobra.Command {
		var harness string
		var degraded, asJSON bool
		c := &cobra.Command{
			Use:               "check AGENT [--harness HARNESS]",
			Short:             "Try every way out of a harness's own sandbox from inside it; exit 1 if one that should be closed is open",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				spec, err := harnessSpec(os.Getenv("HOME"), args[0], harness, "check", degraded)
				if err != nil {
					return auditRefusal("agent harness check", args[0], err)
				}
				comp, err := spec.compile(c)
				if err != nil {
					return auditRefusal(spec.request(""), spec.logName(), err)
				}
				results, err := runProbes(c, spec, comp)
				if err != nil {
					return auditRefusal(spec.request(""), spec.logName(), err)
				}
				return reportProbes(c, results, asJSON)
			},
		}
		harnessFlags(c, &harness, &degraded)
		c.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
		return c
	})
}
