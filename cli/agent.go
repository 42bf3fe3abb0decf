package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// lnk agent create|list|delete: thin wrappers over caps.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:   "create NAME",
			Short: "Make an agent: a random ID and its folders under ~/Link/Agents/NAME",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
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
				if asJSON {
					if as == nil {
						as = []caps.Agent{}
					}
					return writeJSON(c.OutOrStdout(), as)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tID\tHARNESS\tCREATED")
				for _, a := range as {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, a.ID, dash(a.Harness), a.Created)
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:               "delete NAME",
			Short:             "Delete an agent: its folders go to ~/Link/History/Agents",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				dest, err := caps.DeleteAgent(os.Getenv("HOME"), args[0])
				if err != nil {
					return agentErr(err, args[0])
				}
				fmt.Fprintf(c.OutOrStdout(), "deleted agent %s; its folders are in %s\n", args[0], dest)
				return nil
			},
		}
	})
}

// agentErr maps caps' errors to exit codes: a missing agent is
// ExitMissing; a rule's refusal keeps its Rule (exit 3) and hint.
func agentErr(err error, name string) error {
	if errors.Is(err, caps.ErrNoAgent) {
		return Fail(ExitMissing, err, "lnk agent list shows the agents", "lnk agent create "+name+" makes it")
	}
	if h := hintOf(err); h != "" {
		return Refused(err, strings.ReplaceAll(h, "AGENT", name))
	}
	return err
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
