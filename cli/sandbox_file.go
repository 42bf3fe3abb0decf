package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/cloexec"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/filetool/grants"
)

// lnk sandbox file --agent NAME: the agent's file tool sandbox, running
// lnk-file-tool apply (services/filetool/grants says what of the
// agent's grants it keeps). lnk-file-tool serve --agent NAME runs it for
// each session.

func init() {
	register("sandbox", func() *cobra.Command {
		var agent string
		var degraded bool
		c := &cobra.Command{
			Use:   "file --agent NAME",
			Short: "Run the agent's file tool (lnk-file-tool apply) in its sandbox: its Home, the folders of it [files] write names, no network",
			Long: `Runs lnk-file-tool apply, beside lnk, in a sandbox made from the agent's
grants narrowed to the file tool: its files folder read, the folders of it
that [files] write names written, its instructions, skills and
conversations read; no network, no tool, no other folder or program.
Calls are JSON lines on stdin, answers on stdout. lnk-file-tool serve
--agent NAME starts it at a session's first call.`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				cloexec.MarkInherited()
				if agent == "" {
					return Usage("name the agent: lnk sandbox file --agent NAME", "lnk agent list shows the agents")
				}
				comp, err := caps.CompileAgent(os.Getenv("HOME"), agent)
				if errors.Is(err, caps.ErrNoAgent) {
					return Fail(ExitMissing, err, "lnk agent list shows the agents")
				}
				if err != nil {
					return err
				}
				tool, err := besideLnk("lnk-file-tool")
				if err != nil {
					return err
				}
				fs, err := grants.ForAgent(comp, tool)
				var no *grants.NoFileGrantError
				if errors.As(err, &no) {
					return Refused(err, no.Hint())
				}
				if err != nil {
					return err
				}
				// The agent's folders are the kernel's (sandbox_kernel.go):
				// the file tool's are among them.
				ks, err := startInKernel(c.Context(), comp, agent, harnessProfile{})
				if err != nil {
					return err
				}
				defer ks.Close(context.Background())
				// apply starts no child and needs no network: it is the
				// sandbox's PID 1, one process fewer in each session.
				s, err := buildSandboxWith(fs.Grants, fs.Argv, degraded, nil, func(o *sandbox.Options) {
					o.AsPid1 = true
					o.Held = ks.Held
				}, tool)
				ks.DropHeld()
				if err != nil {
					return err
				}
				for _, n := range s.Notices {
					fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n", n)
				}
				// lnk stays beside it, holding the kernel's connection.
				ks.Hook(c.Context(), s)
				lockForChildren() // bubblewrap's PR_SET_PDEATHSIG comes from this thread
				code, err := s.Start(os.Stdin, c.OutOrStdout(), c.ErrOrStderr(), nil)
				if err != nil {
					return err
				}
				if kerr := ks.Finish(context.Background()); kerr != nil {
					return kerr
				}
				return &ExitError{Code: code, Silent: true, Err: fmt.Errorf("exit %d", code)}
			},
		}
		c.Flags().StringVar(&agent, "agent", "", "the agent whose files")
		c.Flags().BoolVar(&degraded, "degraded", false, "run even where landlock or seccomp is missing (said at every start)")
		return c
	})
}
