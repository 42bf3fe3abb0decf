package cli

import (
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/proto"
)

// lnk kernel caps AGENT and lnk kernel ping: what the kernel makes of an
// agent's grants, and how fast it answers.

func init() {
	register("kernel", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "caps AGENT",
			Short: "Start AGENT's grants as capabilities in the kernel, show them, and revoke them",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				home, err := homeDir()
				if err != nil {
					return err
				}
				// Refuse a bad agent or grant here, with caps' own words;
				// the kernel compiles them again itself.
				if _, err := caps.CompileAgent(home, args[0]); err != nil {
					return agentErr(err, args[0])
				}
				cl, err := kernelClient(c.Context())
				if err != nil {
					return err
				}
				defer cl.Close()
				st, err := cl.Start(c.Context(), &proto.StartRequest{Agent: args[0], Folders: []proto.Folder{}, Compile: true})
				if err != nil {
					return kernelErr(err)
				}
				n, err := cl.End(c.Context(), args[0], st.Start)
				if err != nil {
					return kernelErr(err)
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), struct {
						*proto.StartReply
						Revoked int `json:"revoked"`
					}{st, n})
				}
				w := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintf(w, "start %d of %s\n", st.Start, args[0])
				fmt.Fprintln(w, "CAPABILITY\tRIGHTS\tFOLDER")
				for _, ci := range st.Caps {
					fmt.Fprintf(w, "%s…\t%s\t%s\n", ci.Handle[:8], ci.Rights, ci.Route)
				}
				fmt.Fprintf(w, "revoked %d at the start's end\n", n)
				return w.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("kernel", func() *cobra.Command {
		var count int
		c := &cobra.Command{
			Use:   "ping",
			Short: "Time no-op round trips to the kernel (starting one if none runs)",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if count < 1 || count > 1000000 {
					return Usage("--count must be 1 to 1000000")
				}
				cl, err := kernelClient(c.Context())
				if err != nil {
					return err
				}
				defer cl.Close()
				d := make([]time.Duration, count)
				for i := range d {
					t0 := time.Now()
					if err := cl.Ping(c.Context()); err != nil {
						return kernelErr(err)
					}
					d[i] = time.Since(t0)
				}
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				fmt.Fprintf(c.OutOrStdout(), "%d round trips: p50 %v, p99 %v\n", count, d[count/2], d[count*99/100])
				return nil
			},
		}
		c.Flags().IntVarP(&count, "count", "n", 1000, "how many round trips")
		return c
	})
}
