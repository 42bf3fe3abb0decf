package cli

import (
	"context"
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
				r, err := endAgentInKernel(c.Context(), home, agent)
				if err != nil {
					return err
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

// endAgentInKernel has the kernel end every running start of agent (its
// sandboxes killed, its capabilities revoked); with no kernel running
// there is no start, and nothing is started to say so.
func endAgentInKernel(ctx context.Context, home, agent string) (*proto.EndAgentReply, error) {
	cl, err := client.Connect(home)
	if errors.Is(err, client.ErrNotRunning) {
		return &proto.EndAgentReply{}, nil // no kernel, no start: a sandbox never runs unrecorded
	}
	if err != nil {
		return nil, connectErr(err)
	}
	defer cl.Close()
	r, err := cl.EndAgent(ctx, agent)
	var we *wire.Error
	if errors.As(err, &we) && we.Code == proto.CodeRefused {
		return nil, Refused(errors.New(we.Message), "lnk agent list shows the agents")
	}
	if err != nil {
		return nil, kernelErr(err)
	}
	return r, nil
}
