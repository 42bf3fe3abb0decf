package cli

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// lnk agent harness list AGENT [--json]: the agent's harnesses, which is
// its own, each one's home and layer, and why a home would be refused.
// What each layer grants is lnk agent show --permissions's.

func init() {
	register("agent harness", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:               "list AGENT",
			Short:             "List an agent's harnesses: their homes, their layers, which is the agent's own",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home := os.Getenv("HOME")
				hs, err := caps.ListHarnesses(home, args[0])
				if err != nil {
					return agentErr(err, args[0])
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), hs)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "HARNESS\tOWN\tHOME\tLAYER\tSTATE")
				for _, h := range hs {
					own, state := "", "ok"
					if h.Own {
						own = "yes"
					}
					switch {
					case h.Refused != "":
						state = "refused: " + h.Refused
					case h.Missing:
						state = "no home yet (made at its first run)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Name, dash(own), tilde(home, h.Home), dash(tilde(home, h.Layer)), state)
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}
