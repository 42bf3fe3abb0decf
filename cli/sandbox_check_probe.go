package cli

import (
	"encoding/json"
	"io"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

type capsCompiled = caps.Compiled

// lnk sandbox probe: what `lnk sandbox check` runs inside the sandbox.
// It reads the probes as JSON on stdin and prints the results as JSON.

func init() {
	register("sandbox", func() *cobra.Command {
		return &cobra.Command{
			Use:    "probe",
			Short:  "Run lnk sandbox check's probes (inside the sandbox)",
			Hidden: true,
			Args:   cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				var spec probe.Spec
				b, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
				if err != nil {
					return err
				}
				if err := json.Unmarshal(b, &spec); err != nil {
					return Usage("lnk sandbox probe reads its probes as JSON on stdin: " + err.Error())
				}
				return json.NewEncoder(c.OutOrStdout()).Encode(probe.Run(spec))
			},
		}
	})
}
