package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/move"
)

// lnk agent stop|status NAME.

// stopWait is how long stop waits for the supervisor to end its harness
// before it kills the supervisor, and with it the harness.
const stopWait = 15 * time.Second

func init() {
	register("agent", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:               "stop NAME",
			Short:             "Stop the agent: its harness, its whole sandbox and everything it started",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				was, err := stopAgent(home, a)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), map[string]any{"agent": a.Name, "id": a.ID, "was_running": was, "running": false})
				}
				if was {
					fmt.Fprintf(c.OutOrStdout(), "stopped agent %s\n", a.Name)
				} else {
					fmt.Fprintf(c.OutOrStdout(), "agent %s was not running\n", a.Name)
				}
				return nil
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("agent", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:               "status NAME",
			Short:             "Show whether the agent runs, since when, its sandbox, what it enforces, its ports and background commands",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				return printStatus(c, home, a, asJSON)
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}

// stopAgent stops agent a: its unit where a user manager runs it, then
// its supervisor wherever it runs, then what a killed supervisor left.
// The sandbox's lnk sandbox run ends with it, and with that lnk's
// connection the kernel's record of the start.
func stopAgent(home string, a *caps.Agent) (bool, error) {
	unitWas := false
	if userManagerRuns() {
		unit := agentlife.UnitName(a.ID)
		if exec.Command("systemctl", "--user", "is-active", "--quiet", unit).Run() == nil {
			unitWas = true
		}
		if out, err := exec.Command("systemctl", "--user", "stop", unit).CombinedOutput(); err != nil && unitWas {
			return true, fmt.Errorf("systemctl --user stop %s: %v: %s", unit, err, strings.TrimSpace(string(out)))
		}
	}
	was, err := agentlife.Stop(home, a, stopWait)
	if err != nil {
		return was || unitWas, Fail(ExitFailure, err, "lnk agent status "+a.Name+" shows what runs")
	}
	// The agent's other starts end with it: its background commands
	// (the run tool's), then every sandbox the kernel records for it
	// (a run tool call, a lnk sandbox run --agent by hand).
	if err := stopBackground(home, a.Name); err != nil {
		return true, err
	}
	if _, err := endAgentInKernel(context.Background(), home, a.Name); err != nil {
		return true, err
	}
	return was || unitWas, nil
}

// agentStatus is lnk agent status --json.
type agentStatus struct {
	Agent      string     `json:"agent"`
	ID         string     `json:"id"`
	Running    bool       `json:"running"`
	PID        int        `json:"pid,omitempty"` // the harness's
	Supervisor int        `json:"supervisor_pid,omitempty"`
	Mode       string     `json:"mode,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
	Starts     int        `json:"starts"`
	Sandbox    bool       `json:"sandbox"`              // as the agent's setting says now
	RunningIn  *bool      `json:"running_in,omitempty"` // whether the running harness is sandboxed
	// SandboxRefused is why this machine refuses the setting's sandbox
	// off (caps.ErrNoSandboxRefused): the agent does not start so.
	SandboxRefused string          `json:"sandbox_refused,omitempty"`
	Ports          *caps.PortBlock `json:"ports"`
	// WebhookPort is where the running agent's webhook listener takes
	// posts on 127.0.0.1 (0: none runs).
	WebhookPort int `json:"webhook_port,omitempty"`
	// Model is Link Harness's [model], with its fallback; none for
	// another harness.
	Model      *caps.AgentModel  `json:"model,omitempty"`
	Log        string            `json:"log,omitempty"`
	LastExit   string            `json:"last_exit,omitempty"`
	Enforces   []caps.Line       `json:"enforces"`
	Background []map[string]any  `json:"background"`
	Record     *agentlife.Record `json:"record,omitempty"`
	// PlacingLeft: a receive or restore of the agent put things in place
	// and has not ended (its journal is there, ~/.lnk/moving): cut short
	// by a kill and not undone yet (lnk agent start undoes it first), or
	// under way.
	PlacingLeft bool `json:"placing_left,omitempty"`
}

func printStatus(c *cobra.Command, home string, a *caps.Agent, asJSON bool) error {
	st, err := agentlife.ReadStatus(home, a)
	if err != nil {
		return err
	}
	s := agentStatus{Agent: a.Name, ID: a.ID, Running: st.Running, Sandbox: !a.NoSandbox, Ports: a.Ports,
		Background: st.Background, Enforces: []caps.Line{}, Record: st.Record}
	if s.PlacingLeft, err = move.PlacingLeft(home, a.ID); err != nil {
		return fmt.Errorf("agent %s's placing journal (~/.lnk/moving): %w", a.Name, err)
	}
	if _, err := a.SandboxOff(home); errors.Is(err, caps.ErrNoSandboxRefused) {
		s.SandboxRefused = err.Error()
	} else if err != nil {
		return err
	}
	if r := st.Record; r != nil {
		s.LastExit, s.Log, s.Starts = r.LastExit, r.Log, r.Starts
		if st.Running {
			since, sandboxed := r.Since, r.Sandbox
			s.PID, s.Supervisor, s.Mode, s.Since, s.RunningIn = r.HarnessPID, r.PID, r.Mode, &since, &sandboxed
			if r.State != agentlife.StateRunning {
				s.PID = 0
			} else {
				s.WebhookPort = r.WebhookPort
			}
		}
	}
	if a.RunsLinkHarness() {
		s.Model = a.Model
		if s.Model == nil {
			s.Model = &caps.AgentModel{Format: caps.ModelBuiltin}
		}
	}
	if !a.NoSandbox {
		lines, _, err := caps.Permissions(home, a.Name)
		if err != nil {
			return agentErr(err, a.Name)
		}
		s.Enforces = lines
	}
	if asJSON {
		return writeJSON(c.OutOrStdout(), s)
	}
	w := c.OutOrStdout()
	fmt.Fprintf(w, "agent     %s (id %s)\n", a.Name, a.ID)
	switch {
	case st.Running && st.Record != nil && st.Record.State == agentlife.StateRunning:
		fmt.Fprintf(w, "running   yes: harness pid %d, supervisor pid %d (%s)\n", s.PID, s.Supervisor, s.Mode)
		fmt.Fprintf(w, "since     %s (start %d)\n", s.Since.Local().Format(time.RFC3339), s.Starts)
	case st.Running:
		fmt.Fprintf(w, "running   its supervisor runs (pid %d, %s); the harness is %s\n", s.Supervisor, s.Mode, st.Record.State)
	default:
		fmt.Fprintf(w, "running   no\n")
	}
	if s.PlacingLeft {
		// The journal is there from a placing's first step to its end:
		// one under way shows too, so both are named.
		fmt.Fprintf(w, "placing   CUT SHORT, or under way: a receive or restore put things in place and has not ended (~/.lnk/moving/%s.placing),\n"+
			"          so the agent may be part old, part new; if none runs, lnk agent start %s undoes it first (lnk agent restore %s too)\n", a.ID, a.Name, a.Name)
	}
	switch {
	case a.NoSandbox:
		fmt.Fprintf(w, "sandbox   OFF (lnk agent start --sandbox %s turns it back on)\n", a.Name)
		if s.SandboxRefused != "" {
			fmt.Fprintf(w, "          refused on this machine, so the agent does not start: %s\n", s.SandboxRefused)
		}
	default:
		fmt.Fprintf(w, "sandbox   on\n")
	}
	if s.RunningIn != nil && *s.RunningIn == a.NoSandbox {
		fmt.Fprintf(w, "          the running harness started with its sandbox %s: lnk agent restart %s applies the setting\n", onOff(*s.RunningIn), a.Name)
	}
	if a.Ports != nil {
		fmt.Fprintf(w, "ports     %d-%d (LNK_PORT=%d)\n", a.Ports.First, a.Ports.Last(), a.Ports.First)
	} else {
		fmt.Fprintf(w, "ports     -\n")
	}
	if s.WebhookPort != 0 {
		fmt.Fprintf(w, "webhooks  http://127.0.0.1:%d/h/<id> (lnk agent webhook list %s names each)\n", s.WebhookPort, a.Name)
	}
	if m := s.Model; m != nil {
		fmt.Fprintf(w, "model     %s\n", describeModel(m))
		if m.Fallback != nil {
			fmt.Fprintf(w, "fallback  %s (when the model is off, silent 60 s or can't hold the prompt; then for 3 minutes)\n", describeModel(m.Fallback))
		} else {
			fmt.Fprintf(w, "fallback  none (lnk agent start %s --fallback FORMAT:URL:MODEL sets one)\n", a.Name)
		}
	}
	if s.Log != "" {
		fmt.Fprintf(w, "log       %s\n", tilde(home, s.Log))
	}
	if s.LastExit != "" {
		// The record file is the supervisor's, but its words quote a
		// harness's error: printed cleaned, as one line.
		fmt.Fprintf(w, "last end  %s\n", textsafe.Line(s.LastExit))
	}
	if a.NoSandbox {
		fmt.Fprintf(w, "enforces  nothing: the sandbox is off\n")
	} else {
		fmt.Fprintf(w, "enforces\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  GRANT\tVALUE\tWHOSE\tROUTE")
		for _, l := range s.Enforces {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", l.Grant, tilde(home, l.Value), l.Whose, l.Route)
		}
		tw.Flush()
	}
	if len(s.Background) == 0 {
		fmt.Fprintf(w, "background commands: none\n")
		return nil
	}
	fmt.Fprintf(w, "background commands\n")
	for _, b := range s.Background {
		fmt.Fprintf(w, "  %s %s %s\n", field(b, "id"), field(b, "state"), command(b))
	}
	return nil
}

// command is a background record's argv on one line, its words joined
// by spaces, without control characters (field).
func command(m map[string]any) string {
	argv, ok := m["argv"].([]any)
	if !ok || len(argv) == 0 {
		return "-"
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = fmt.Sprint(a)
	}
	return field(map[string]any{"argv": strings.Join(words, " ")}, "argv")
}

// field shows one value of a background record on one line, without
// control characters: the command is the agent's, and may hold anything.
func field(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "-"
	}
	return textsafe.Line(strings.Join(strings.Fields(fmt.Sprint(v)), " "))
}

// describeModel is one line of a [model]: Link's built-in, or its
// format, address and name, each cleaned for the terminal.
func describeModel(m *caps.AgentModel) string {
	if m.Format == caps.ModelBuiltin {
		if m.BaseURL == "" {
			return "Link's built-in"
		}
		return "Link's built-in at " + textsafe.Line(m.BaseURL)
	}
	return textsafe.Line(m.Format + " " + m.BaseURL + " " + m.Model)
}
