package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// lnk machine show [--json]: ~/.lnk/machine.toml as caps.LoadMachine reads
// it (made at first use), with each setting's meaning.

func init() {
	register("machine", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "show",
			Short: "Show this machine's ID, name and what it allows every agent (~/.lnk/machine.toml)",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				m, err := caps.LoadMachine(os.Getenv("HOME"))
				if err != nil {
					return machineErr(err)
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), machineJSON{
						ID: m.ID, Name: m.Name, Unsandboxed: m.NoSandboxAllowed(),
						SharedHarness: m.SharedHarness, SharedBridge: m.SharedBridge,
						KeepMoved: m.KeepMoved.String(), KeepMovedSeconds: int64(m.KeepMoved.Seconds()),
					})
				}
				w := c.OutOrStdout()
				fmt.Fprintf(w, "id              %s\n", m.ID)
				fmt.Fprintf(w, "name            %s\n", m.Name)
				fmt.Fprintf(w, "unsandboxed     %s\n", yesNo(m.NoSandboxAllowed(), "allowed (an agent may be started with --no-sandbox)", "refused: no agent runs without a sandbox"))
				fmt.Fprintf(w, "shared_harness  %s\n", yesNo(m.SharedHarness, "on: one harness serves an owner's agents", "off"))
				fmt.Fprintf(w, "shared_bridge   %s\n", yesNo(m.SharedBridge, "on: one bridge carries every agent's connections", "off"))
				fmt.Fprintf(w, "keep_moved      %s (how long ~/Link/History/Agents keeps what left)\n", m.KeepMoved)
				return nil
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}

// machineJSON is `lnk machine show --json`: unsandboxed is what applies
// (true where the file says nothing).
type machineJSON struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Unsandboxed      bool   `json:"unsandboxed"`
	SharedHarness    bool   `json:"shared_harness"`
	SharedBridge     bool   `json:"shared_bridge"`
	KeepMoved        string `json:"keep_moved"`
	KeepMovedSeconds int64  `json:"keep_moved_seconds"`
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// machineErr is a refusal of machine.toml (exit 3) with its hint.
func machineErr(err error) error {
	if h := hintOf(err); h != "" {
		return Refused(err, h)
	}
	return err
}
