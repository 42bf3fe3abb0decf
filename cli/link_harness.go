package cli

import (
	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// lnk sandbox run --agent NAME --link-harness -- lnk-harness CONFIG: the
// agent's own sandbox as Link Harness runs in it (caps.CompileLinkHarness,
// which the kernel compiles too: StartRequest Harness "link", no
// profile), what services/agentlife's supervisor runs for an agent whose
// agent.toml names no [start] command. Its calls are logged as the
// agent's own. The harness's program (lnk-harness, beside lnk) is bound
// in read-only and executable, that file alone; its tools are Link's own
// run and file for the agent (services/owntools), defined here, never
// from ~/.lnk/tools.

// linkHarnessProfile marks the sandboxSpec of Link Harness.
var linkHarnessProfile = harnessProfile{name: caps.LinkHarness}

// isLinkHarness says whether h is Link Harness's run.
func (h harnessProfile) isLinkHarness() bool { return h == linkHarnessProfile }

// linkHarnessExec is what Link Harness's sandbox runs besides lnk-init:
// lnk-harness, beside lnk.
func linkHarnessExec() ([]string, error) {
	prog, err := besideLnk("lnk-harness")
	if err != nil {
		return nil, err
	}
	return []string{prog}, nil
}

// linkHarnessFlag binds the hidden --link-harness, with --agent alone.
func linkHarnessFlag(c *cobra.Command, s *sandboxSpec) {
	c.Flags().BoolFunc("link-harness", "run the agent's sandbox as Link Harness runs in it (its supervisor's)", func(string) error {
		s.harness = linkHarnessProfile
		return nil
	})
	c.Flags().MarkHidden("link-harness")
}
