package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// lnk agent harness run|check|list: a harness's own sandbox — the
// agent's grants, the harness's layer and the harness's home as HOME —
// for a command run as the harness would run it, and for the probes
// (security.txt, "Running a command in its sandbox", "Checking its
// sandbox"). Each is compiled by caps.CompileHarness and run by the same
// code as lnk sandbox run --agent and lnk sandbox check, through the
// harnessProfile in their sandboxSpec; its calls are logged under
// <agent>/<harness>-run or -check, never as the running agent's.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{Use: "harness", Short: "Run a command, or the sandbox's probes, in a harness's own sandbox; list an agent's harnesses",
			Args: cobra.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	})
}

// harnessProfile marks a sandboxSpec as a harness's own sandbox: which
// harness, and "run" or "check". The zero value is the agent's own
// sandbox.
type harnessProfile struct {
	name    string
	profile string
}

// compile compiles agent's grants: with a profile, joined with the
// harness's layer and home (caps.CompileHarness), else as lnk sandbox run
// --agent does (caps.CompileAgent).
func (h harnessProfile) compile(home, agent string) (*caps.Compiled, error) {
	if h.isLinkHarness() {
		return caps.CompileLinkHarness(home, agent) // link_harness.go
	}
	if h.profile == "" {
		return caps.CompileAgent(home, agent)
	}
	comp, err := caps.CompileHarness(home, agent, h.name, h.profile)
	switch {
	case errors.Is(err, caps.ErrNoHarness):
		return nil, Fail(ExitMissing, err, "lnk agent harness list "+agent+" lists its harnesses")
	case err != nil:
		return nil, agentErr(err, agent) // a refusal's hint names a lnk command
	}
	return comp, nil
}

// logName is the name the spec's calls and refusals are logged under:
// the agent's, or <agent>/<harness>-<profile> (caps.Compiled.LogName).
func (s *sandboxSpec) logName() string {
	if s.harness.profile == "" {
		return s.agent
	}
	return s.agent + "/" + s.harness.name + "-" + s.harness.profile
}

// request is the audit log's request for the command: plain for lnk
// sandbox run and check, "agent harness run|check" for a harness's.
func (s *sandboxSpec) request(plain string) string {
	if s.harness.profile == "" {
		return plain
	}
	return "agent harness " + s.harness.profile
}

// harnessSpec is the sandboxSpec of agent's harness (flagged, or the one
// agent.toml names) for profile, after the checks every harness command
// makes: the agent exists and is no link, the harness's name is a name,
// and the agent's sandbox is on (caps.Agent.SandboxOff).
func harnessSpec(home, agent, flagged, profile string, degraded bool) (*sandboxSpec, error) {
	a, err := caps.LoadAgent(home, agent)
	if err != nil {
		return nil, agentErr(err, agent)
	}
	h := flagged
	if h == "" {
		h = a.Harness
	}
	if h == "" {
		return nil, Fail(ExitMissing, fmt.Errorf("agent %s names no harness: name one with --harness", agent),
			"lnk agent harness list "+agent+" lists its harnesses")
	}
	if err := caps.CheckName(h); err != nil {
		return nil, Refused(fmt.Errorf("--harness: %w", err), "lnk agent harness list "+agent+" lists its harnesses by name")
	}
	off, err := a.SandboxOff(home)
	if err != nil {
		if errors.Is(err, caps.ErrNoSandboxRefused) {
			return nil, Refused(err, "lnk agent start --sandbox "+agent+" turns its sandbox back on")
		}
		return nil, err
	}
	if off && profile != "run" {
		// With the sandbox off, check has nothing to check: it refuses,
		// never reporting on a sandbox that does not run.
		return nil, Refused(fmt.Errorf("agent %s runs with its sandbox off (its no-sandbox setting): lnk agent harness %s runs only in a harness's sandbox", agent, profile),
			"lnk agent show "+agent+" shows the setting; lnk agent start --sandbox "+agent+" turns its sandbox back on")
	}
	// With the sandbox off, run warns and runs the command unconfined,
	// as the harness runs, beside a proxy of its own on a free port
	// (security.txt, "Running a command in its sandbox"; agent_harness_off.go).
	return &sandboxSpec{agent: agent, degraded: degraded, harness: harnessProfile{name: h, profile: profile}, unconfined: off}, nil
}

// harnessFlags binds --harness and --degraded.
func harnessFlags(c *cobra.Command, harness *string, degraded *bool) {
	c.Flags().StringVar(harness, "harness", "", "the harness (default: the one the agent's agent.toml names)")
	c.Flags().BoolVar(degraded, "degraded", false, "run even where landlock or seccomp is missing (said at every start)")
}

func init() {
	register("agent harness", func() *cobra.Command {
		var harness string
		var degraded bool
		c := &cobra.Command{
			Use:   "run AGENT [--harness HARNESS] -- COMMAND...",
			Short: "Run a command in a harness's own sandbox: the agent's grants, the harness's, its home, a proxy of its own",
			Long: `Runs COMMAND as the harness itself would run: in its own sandbox, with
the agent's grants joined with the harness's layer
(~/.lnk/harnesses/HARNESS.toml), the harness's home
(~/Link/Agents/AGENT/Harnesses/HARNESS) written and as HOME, and a proxy
and rules of its own, so the running agent's are never changed. Its
calls are logged as AGENT/HARNESS-run. Returns the command's exit status
(128+N for signal N).`,
			Args:              cobra.MinimumNArgs(2),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				if c.ArgsLenAtDash() != 1 {
					return Usage("name the agent, then -- and the command", "lnk agent harness run "+args[0]+" -- COMMAND")
				}
				spec, err := harnessSpec(os.Getenv("HOME"), args[0], harness, "run", degraded)
				if err != nil {
					return auditRefusal("agent harness run", args[0], err)
				}
				// The command binds its flags' defaults into the spec
				// it is made with: the harness's is set after.
				var run sandboxSpec
				cmd := sandboxRunCommand(&run)
				run.agent, run.degraded, run.harness = spec.agent, spec.degraded, spec.harness
				if spec.unconfined {
					return runUnconfined(c, spec, args[1:])
				}
				return cmd.RunE(c, args[1:])
			},
		}
		harnessFlags(c, &harness, &degraded)
		return c
	})
}
