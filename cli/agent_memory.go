package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/memory/memsock"
)

// lnk agent memory stop [AGENT]: ends the owner's memory service (the
// owner of AGENT, or the user running lnk), leaving its index and notes
// where they are (security.txt "Memory": delete the index by hand).

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:   "memory",
			Short: "Link Memory, the service an owner's sandboxed agents search their notes and conversations with",
			Args:  cobra.NoArgs,
			RunE:  func(c *cobra.Command, args []string) error { return c.Help() },
		}
	})
	register("agent memory", func() *cobra.Command {
		return &cobra.Command{
			Use:               "stop [AGENT]",
			Short:             "End the owner's memory service (AGENT's owner's, or yours); its index stays",
			Args:              cobra.MaximumNArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home := os.Getenv("HOME")
				owner, err := currentOwner()
				if err != nil {
					return err
				}
				if len(args) == 1 {
					a, err := caps.LoadAgent(home, args[0])
					if err != nil {
						return agentErr(err, args[0])
					}
					owner = a.Owner
				}
				if err := memsock.CheckOwner(owner); err != nil {
					return Refused(fmt.Errorf("owner %q: %w", owner, err), "lnk agent show AGENT names its owner")
				}
				sock := filepath.Join(home, "Link", "Agents", ".memory", owner, "run", memsock.SocketName)
				switch err := memsock.Stop(context.Background(), sock); {
				case errors.Is(err, memsock.ErrNotRunning):
					fmt.Fprintf(c.OutOrStdout(), "memory: %s's service was not running; its index is where it was\n", owner)
					return nil
				case err != nil:
					return Refused(fmt.Errorf("stopping %s's memory service: %w", owner, err), "lnk agent memory stop tries again; lnk-memory ends by itself seconds after its last session")
				}
				fmt.Fprintf(c.OutOrStdout(), "memory: %s's service stopped; its index stays in each agent's Agent/memory/\n", owner)
				return nil
			},
		}
	})
}

// currentOwner is the name Link records as a new agent's owner: the
// user's name, or its uid where it has none.
func currentOwner() (string, error) {
	if u, err := user.Current(); err == nil {
		return u.Username, nil
	}
	return strconv.Itoa(os.Getuid()), nil
}
