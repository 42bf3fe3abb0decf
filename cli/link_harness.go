package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/owntools"
	"lnk.dev/lnk/services/toolbridge"
	"lnk.dev/lnk/services/toolbridge/tooldef"
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

// linkHarnessExec adds lnk-harness to what the sandbox may run.
func linkHarnessExec(held func(*sandbox.Options)) (func(*sandbox.Options), error) {
	prog, err := besideLnk("lnk-harness")
	if err != nil {
		return nil, err
	}
	return func(o *sandbox.Options) {
		if held != nil {
			held(o)
		}
		o.ExtraExec = append(o.ExtraExec, prog)
	}, nil
}

// ownDefs are the definitions the tool bridge reaches comp's tools by:
// for Link Harness, the agent's own run and file tools, then the owner's
// added tools.
func ownDefs(comp *caps.Compiled) toolbridge.Definitions {
	store := tooldef.Store{Home: comp.Home}
	if comp.Harness != caps.LinkHarness || comp.Profile != "" {
		return store
	}
	return ownThenStore{comp: comp, store: store}
}

type ownThenStore struct {
	comp  *caps.Compiled
	store tooldef.Store
}

func (o ownThenStore) Load(name string) (*tooldef.Definition, error) {
	self, err := besideLnk("lnk")
	if err != nil {
		return nil, err
	}
	defs, err := owntools.For(o.comp.Home, filepath.Dir(self), caps.Agent{ID: o.comp.AgentID, Name: o.comp.AgentName}, true)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		if d.Name == name {
			return d, nil
		}
	}
	return o.store.Load(name)
}

// linkHarnessFlag binds the hidden --link-harness, with --agent alone.
func linkHarnessFlag(c *cobra.Command, s *sandboxSpec) {
	c.Flags().BoolFunc("link-harness", "run the agent's sandbox as Link Harness runs in it (its supervisor's)", func(string) error {
		s.harness = linkHarnessProfile
		return nil
	})
	c.Flags().MarkHidden("link-harness")
}
