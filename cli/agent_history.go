package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// Before every `lnk agent` command: read ~/.lnk/machine.toml (made at
// first use; a malformed one refuses the command, since what it allows
// can't be known), move what an older Link kept in ~/Link/Agents/.moved
// to ~/Link/History/Agents, and sweep History of what is past keep_moved
// (one read of the folder). What the sweep or the move could not do is
// said on stderr, and the command goes on: History is hidden from every
// sandbox whatever is left in it.

func init() {
	groupPreRun["agent"] = func(c *cobra.Command, _ []string) error {
		home := os.Getenv("HOME")
		m, err := caps.LoadMachine(home)
		if err != nil {
			return machineErr(err)
		}
		errw := c.ErrOrStderr()
		now := time.Now()
		if moved, err := caps.MigrateMoved(home, now); err != nil {
			fmt.Fprintf(errw, "lnk: moving ~/Link/Agents/.moved to ~/Link/History/Agents: %v\n", err)
		} else if len(moved) > 0 {
			fmt.Fprintf(errw, "lnk: moved %d folder(s) an older Link kept in ~/Link/Agents/.moved to ~/Link/History/Agents (kept %s)\n", len(moved), m.KeepMoved)
		}
		if _, err := caps.SweepHistory(home, m.KeepMoved, now); err != nil {
			fmt.Fprintf(errw, "lnk: sweeping ~/Link/History/Agents: %v\n", err)
		}
		return nil
	}
}
