package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X lnk.dev/lnk/cli.Version=…".
var Version = "dev"

func init() {
	register("", func() *cobra.Command {
		return &cobra.Command{
			Use:   "version",
			Short: "Print lnk's version",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				v := Version
				if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" {
					v = "dev (" + bi.GoVersion + ")"
				}
				fmt.Fprintf(c.OutOrStdout(), "lnk %s\n", v)
				return nil
			},
		}
	})
}
