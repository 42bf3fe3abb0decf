package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/kernel"
)

// lnk kernel install: write the systemd user unit (kernel.InstallUnit).

func init() {
	register("kernel", func() *cobra.Command {
		return &cobra.Command{
			Use:   "install",
			Short: "Write the systemd user unit lnk-kernel.service that runs the kernel",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				home, err := homeDir()
				if err != nil {
					return err
				}
				self, err := os.Executable()
				if err != nil {
					return err
				}
				p, err := kernel.InstallUnit(home, os.Getenv("XDG_CONFIG_HOME"), self)
				if errors.Is(err, kernel.ErrUnitPath) {
					return Fail(ExitFailure, err, "install Link where its path has none of them: make install (PREFIX=/usr/local), or make install PREFIX=~/.local")
				}
				if err != nil {
					return Fail(ExitFailure, err)
				}
				fmt.Fprintf(c.OutOrStdout(), "wrote %s\n", p)
				fmt.Fprintln(c.OutOrStdout(), "  next: systemctl --user daemon-reload && systemctl --user enable --now lnk-kernel.service")
				return nil
			},
		}
	})
}
