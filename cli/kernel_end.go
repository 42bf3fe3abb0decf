package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// lnk kernel end AGENT: the kernel ends every start of the agent, killing
// each one's sandbox through the pidfd it holds and revoking its
// capabilities (lnk agent stop calls it).

func init() {
	register("kernel", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "end AGENT",
			Short: "End every running start of AGENT: its sandboxes killed, its capabilities revoked",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				home, err := homeDir()
				if err != nil {
					return err
				}
				agent := args[0]
				cl, err := client.Connect(home)
				if errors.Is(err, client.ErrNotRunning) {
					// No kernel, no start: a sandbox never runs unrecorded.
					if asJSON {
						return writeJSON(c.OutOrStdout(), map[string]int{"starts": 0, "revoked": 0, "killed": 0})
					}
					fmt.Fprintf(c.OutOrStdout(), "agent %s has no running start (no kernel runs)\n", agent)
					return nil
				}
				if err != nil {
					return connectErr(err)
				}
				defer cl.Close()
				r, err := cl.EndAgent(c.Context(), agent)
				var we *wire.Error
				if errors.As(err, &we) && we.Code == proto.CodeRefused {
					return Refused(errors.New(we.Message), "lnk agent list shows the agents")
				}
				if err != nil {
					return kernelErr(err)
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), r)
				}
				if r.Starts == 0 {
					fmt.Fprintf(c.OutOrStdout(), "agent %s has no running start\n", agent)
					return nil
				}
				fmt.Fprintf(c.OutOrStdout(), "ended %d start(s) of %s: %d sandbox(es) killed, %d capabilities revoked\n",
					r.Starts, agent, r.Killed, r.Revoked)
				return nil
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}
