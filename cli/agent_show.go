package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/textsafe"
)

// lnk agent show AGENT --permissions [--json]: both layers joined, each
// line marked whose and its route. --instructions: what Link Harness puts
// in its prompt from its own folder, its standing instructions and its
// notes (memory/notes.md, what memory's remember wrote), read as the
// harness reads them (agent_show_instructions.go).

func init() {
	register("agent", func() *cobra.Command {
		var perms, instr, asJSON bool
		c := &cobra.Command{
			Use:               "show AGENT",
			Short:             "Show an agent: with --permissions, what it may do, whose grant each is, and its route",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home := os.Getenv("HOME")
				if instr && perms {
					return Usage("--instructions and --permissions show different things: give one", "lnk agent show "+args[0]+" --instructions, then lnk agent show "+args[0]+" --permissions")
				}
				if instr {
					return showInstructions(c.OutOrStdout(), home, args[0], asJSON)
				}
				if !perms {
					a, err := caps.LoadAgent(home, args[0])
					if err != nil {
						return agentErr(err, args[0])
					}
					if asJSON {
						return writeJSON(c.OutOrStdout(), a)
					}
					fmt.Fprintf(c.OutOrStdout(), "name     %s\nid       %s\nowner    %s\nharness  %s\ncreated  %s\nsandbox  %s\nbuckets  %s\n", a.Name, a.ID, a.Owner, dash(a.Harness), a.Created, onOff(!a.NoSandbox), agentBuckets(home, a))
					return nil
				}
				lines, _, err := caps.Permissions(home, args[0])
				if err != nil {
					return agentErr(err, args[0])
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), lines)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "GRANT\tVALUE\tWHOSE\tROUTE")
				for _, l := range lines {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Grant, tilde(home, l.Value), l.Whose, l.Route)
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&perms, "permissions", false, "show the grants, both layers joined")
		c.Flags().BoolVar(&instr, "instructions", false, "show its standing instructions and its notes, as its prompt has them")
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}

// tilde shows a path under home as ~/… (the table only; --json keeps it
// absolute), through textsafe.Line: a folder's name is anyone's text (an
// agent made it, a stream or a harness named it), so no control, bidi or
// zero-width character of it reaches the owner's terminal.
func tilde(home, s string) string {
	return textsafe.Line(tildePath(home, s))
}

func tildePath(home, s string) string {
	home = strings.TrimSuffix(home, "/")
	if home == "" {
		return s
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	if s == home {
		return "~"
	}
	if strings.HasPrefix(s, home+"/") {
		return "~/" + s[len(home)+1:]
	}
	return s
}
