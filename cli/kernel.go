package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/services/toolbridge/kernelstart"
)

// lnk kernel run|start|stop|status: thin wrappers over kernel and
// kernel/client. install is in kernel_install.go.

func homeDir() (string, error) {
	if h := os.Getenv("HOME"); h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}

// kernelClient connects to the owner's kernel, starting one if none
// runs. Other commands call it to go through the kernel.
func kernelClient(ctx context.Context) (*client.Client, error) {
	home, err := homeDir()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if filepath.Base(exe) != "lnk" {
		// Only lnk starts a kernel (lnk kernel run): a program holding
		// the command line (a test) would start itself.
		c, err := client.Connect(home)
		if errors.Is(err, client.ErrNotRunning) {
			return nil, Fail(ExitFailure, fmt.Errorf("no kernel is running, and %s is not lnk, which would start one", filepath.Base(exe)), "lnk kernel start")
		}
		if err != nil {
			return nil, connectErr(err)
		}
		return c, nil
	}
	c, err := client.Dial(ctx, home, exe)
	if err != nil {
		return nil, connectErr(err)
	}
	return c, nil
}

// runningKernel connects to the kernel of this HOME, without starting
// one: a nil client, and no error, when none runs.
func runningKernel() (home string, cl *client.Client, err error) {
	if home, err = homeDir(); err != nil {
		return "", nil, err
	}
	cl, err = client.Connect(home)
	if errors.Is(err, client.ErrNotRunning) {
		return home, nil, nil
	}
	if err != nil {
		return "", nil, connectErr(err)
	}
	return home, cl, nil
}

// connectErr says why the kernel could not be reached: a refused root
// (a link, another's folder, a loose mode) is a rule's refusal.
func connectErr(err error) error {
	if errors.Is(err, kernel.ErrBadRoot) {
		return Refused(err, "look at ~/.lnk yourself: Link never deletes or follows what it did not make")
	}
	return Fail(ExitFailure, err, "lnk kernel run shows why in the foreground")
}

// kernelErr maps a kernel's answer to lnk's exit codes.
func kernelErr(err error) error {
	var we *wire.Error
	if errors.As(err, &we) {
		switch we.Code {
		case proto.CodeRefused:
			return Refused(err)
		case proto.CodeMissing:
			return Fail(ExitMissing, err)
		}
	}
	if errors.Is(err, wire.ErrClosed) {
		return Fail(ExitFailure, fmt.Errorf("the kernel closed the connection: %v", err), "lnk kernel status")
	}
	return err
}

func init() {
	register("kernel", func() *cobra.Command {
		return &cobra.Command{
			Use:   "run",
			Short: "Run the kernel in the foreground (the CLI starts one on demand)",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				home, err := homeDir()
				if err != nil {
					return err
				}
				err = kernel.Run(c.Context(), kernel.Options{Home: home, Testing: os.Getenv("LNK_KERNEL_TESTING") == "1",
					Tools: kernelstart.Servers{}, // the one launcher, for the starts' confined tool bridges
					Ready: func(string) { fmt.Fprintf(c.ErrOrStderr(), "lnk kernel: listening, pid %d\n", os.Getpid()) }})
				switch {
				case errors.Is(err, kernel.ErrRunning):
					return Fail(ExitFailure, err, "lnk kernel status", "lnk kernel stop, then run it again")
				case errors.Is(err, kernel.ErrNotASocket), errors.Is(err, kernel.ErrBadRoot):
					return Refused(err, "look at ~/.lnk yourself: Link never deletes or follows what it did not make")
				}
				return err
			},
		}
	})
	register("kernel", func() *cobra.Command {
		return &cobra.Command{
			Use:   "start",
			Short: "Start the kernel in the background unless one runs",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				cl, err := kernelClient(c.Context())
				if err != nil {
					return err
				}
				defer cl.Close()
				st, err := cl.Status(c.Context())
				if err != nil {
					return kernelErr(err)
				}
				fmt.Fprintf(c.OutOrStdout(), "kernel running, pid %d\n", st.PID)
				return nil
			},
		}
	})
	register("kernel", func() *cobra.Command {
		return &cobra.Command{
			Use:   "stop",
			Short: "Stop the kernel: it finishes what it is doing, stops its brokers and removes its socket",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				home, cl, err := runningKernel()
				if err != nil {
					return err
				}
				if cl == nil {
					fmt.Fprintln(c.OutOrStdout(), "no kernel is running")
					return nil
				}
				err = cl.Stop(c.Context())
				cl.Close()
				if err != nil {
					return kernelErr(err)
				}
				// Wait until it no longer listens.
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					cl, err := client.Connect(home)
					if errors.Is(err, client.ErrNotRunning) {
						fmt.Fprintln(c.OutOrStdout(), "kernel stopped")
						return nil
					}
					if cl != nil {
						cl.Close()
					}
					time.Sleep(20 * time.Millisecond)
				}
				return Fail(ExitFailure, errors.New("the kernel did not stop within 30 s"), "lnk kernel status")
			},
		}
	})
	register("kernel", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "status",
			Short: "Say whether the kernel runs, and what it holds",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				_, cl, err := runningKernel()
				if err != nil {
					return err
				}
				if cl == nil {
					if asJSON {
						return writeJSON(c.OutOrStdout(), map[string]bool{"running": false})
					}
					return Fail(ExitFailure, client.ErrNotRunning, "lnk kernel start")
				}
				defer cl.Close()
				st, err := cl.Status(c.Context())
				if err != nil {
					return kernelErr(err)
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), struct {
						Running bool `json:"running"`
						*proto.StatusReply
					}{true, st})
				}
				w := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintf(w, "kernel\trunning, pid %d, since %s\n", st.PID, st.Started)
				fmt.Fprintf(w, "socket\t%s\n", st.Socket)
				fmt.Fprintf(w, "capabilities\t%d\n", st.Caps)
				fmt.Fprintf(w, "requests\t%d\n", st.Requests)
				for _, s := range st.Starts {
					sb := "no sandbox yet"
					switch {
					case s.Unconfined && s.PID != 0:
						sb = fmt.Sprintf("NO sandbox (its sandbox off): command pid %d", s.PID)
					case s.Unconfined:
						sb = "NO sandbox (its sandbox off), no command yet"
					case s.PID != 0:
						sb = fmt.Sprintf("sandbox pid %d", s.PID)
					}
					fmt.Fprintf(w, "start %d\t%s, %d capabilities, %s\n", s.Start, s.Agent, s.Caps, sb)
				}
				var bs []string
				for _, b := range st.Brokers {
					bs = append(bs, fmt.Sprintf("%s (pid %d, %d restarts)", b.Name, b.PID, b.Restarts))
				}
				if len(bs) > 0 {
					fmt.Fprintf(w, "brokers\t%s\n", strings.Join(bs, ", "))
				}
				return w.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}
