package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/move"
)

// lnk agent create|list|delete: thin wrappers over caps.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:   "create NAME",
			Short: "Make an agent: a random ID and its folders under ~/Link/Agents/NAME",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				// Never while another agent's placing of that name is not
				// undone: its undo would remove this one (services/move).
				if err := caps.CheckName(args[0]); err != nil {
					return agentErr(err, args[0])
				}
				// Nor while a receive of that name is between its own
				// check and its journal's head: the name's lock keeps the
				// two apart (move.LockName).
				unlock, err := move.LockName(os.Getenv("HOME"), args[0])
				if err != nil {
					if perr := placingErr(err, args[0]); perr != nil {
						err = perr
					}
					return auditRefusal("agent create", args[0], err)
				}
				defer unlock()
				if err := move.CheckNameFree(os.Getenv("HOME"), args[0], ""); err != nil {
					if perr := placingErr(err, args[0]); perr != nil {
						err = perr
					}
					return auditRefusal("agent create", args[0], err)
				}
				a, err := caps.CreateAgent(os.Getenv("HOME"), args[0])
				if err != nil {
					return agentErr(err, args[0])
				}
				fmt.Fprintf(c.OutOrStdout(), "made agent %s (id %s)\n", a.Name, a.ID)
				return nil
			},
		}
	})
	register("agent", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "list",
			Short: "List the agents",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				as, err := caps.ListAgents(os.Getenv("HOME"))
				if err != nil {
					return err
				}
				// Then each placing journal, cut short or under way: an
				// agent new here whose receive a kill cut short before its
				// agent.toml existed is named nowhere else (JSON keeps its
				// form: these go to stderr).
				if asJSON {
					if as == nil {
						as = []caps.Agent{}
					}
					if err := writeJSON(c.OutOrStdout(), as); err != nil {
						return err
					}
					return printJournals(c.ErrOrStderr(), os.Getenv("HOME"), "lnk: ")
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tID\tHARNESS\tCREATED")
				for _, a := range as {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, a.ID, dash(a.Harness), a.Created)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				return printJournals(c.OutOrStdout(), os.Getenv("HOME"), "")
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:               "delete NAME",
			Short:             "Delete an agent: stopped first; its own folder (Agent/), Home and logs go to ~/Link/History/Agents for keep_moved (30 days); its Config/, harnesses' homes and rclone's HOME are removed",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				// A running agent is stopped first, with everything its
				// harness started (agent_status.go).
				if a, err := caps.LoadAgent(os.Getenv("HOME"), args[0]); err == nil {
					if _, err := stopAgent(os.Getenv("HOME"), a); err != nil {
						return err
					}
				}
				if err := endBackground(os.Getenv("HOME"), args[0]); err != nil { // agent_background.go
					return agentErr(err, args[0])
				}
				dest, err := caps.DeleteAgent(os.Getenv("HOME"), args[0])
				if err != nil {
					return agentErr(err, args[0])
				}
				fmt.Fprintf(c.OutOrStdout(), "deleted agent %s; its own folder, Home and logs are in %s, kept for keep_moved (lnk machine show)\n", args[0], dest)
				return nil
			},
		}
	})
}

// loadAgent reads agent name under HOME, its errors as agentErr says
// them.
func loadAgent(name string) (home string, a *caps.Agent, err error) {
	home = os.Getenv("HOME")
	if a, err = caps.LoadAgent(home, name); err != nil {
		return "", nil, agentErr(err, name)
	}
	return home, a, nil
}

// agentErr maps caps' errors to exit codes: a missing agent is
// ExitMissing; a rule's refusal keeps its Rule (exit 3) and hint.
func agentErr(err error, name string) error {
	if errors.Is(err, caps.ErrNoAgent) {
		// One whose receive a kill cut short before it was whole is
		// undone by name (agent_recover.go), and made only after.
		if h := cutShortHint(os.Getenv("HOME"), name); h != "" {
			return Fail(ExitMissing, err, h)
		}
		return Fail(ExitMissing, err, "lnk agent list shows the agents", "lnk agent create "+name+" makes it")
	}
	var hints []string
	if h := hintOf(err); h != "" {
		hints = append(hints, strings.ReplaceAll(h, "AGENT", name))
	}
	var r *caps.Refusal
	if !errors.As(err, &r) {
		if len(hints) > 0 {
			return Refused(err, hints...)
		}
		return err
	}
	switch {
	case namesCommand(hints):
	case errors.Is(err, caps.ErrBadName) && caps.CheckName(name) != nil:
		// The agent's own name, not a tool's or a team's: never
		// repeated in a hint, which it could fill with escapes.
		hints = append(hints, "lnk agent list shows the agents by name")
	default:
		hints = append(hints, "lnk agent show "+name+" --permissions shows what it may do now")
	}
	return Refused(err, hints...)
}

// namesCommand reports whether one of hints names a lnk command.
func namesCommand(hints []string) bool {
	for _, h := range hints {
		if strings.HasPrefix(h, "lnk ") || strings.Contains(h, " lnk ") {
			return true
		}
	}
	return false
}

// completeAgents completes an agent's name for the shell.
func completeAgents(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	as, _ := caps.ListAgents(os.Getenv("HOME"))
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
