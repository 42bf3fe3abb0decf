package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/move"
)

// lnk agent pause|state-send|receive: a move's two ends (services/move).
// state-send writes the sealed stream to stdout; receive reads it on
// stdin. Ctrl-C, a closed pipe or a stop (SIGTERM, SIGHUP) ends either
// as a failure: the sender never writes the stream's final record, the
// receiver removes what it unpacked.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:               "pause NAME",
			Short:             "Stop the agent for a move's switch and mark it paused (~/.lnk/agents/NAME/paused); lnk agent start ends the pause",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				if _, err := stopAgent(home, a); err != nil {
					return err
				}
				// No connection of its is carried here to be told it
				// stopped taking messages: it is quiet at once.
				if err := caps.MarkPaused(home, a.Name, true); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "paused agent %s: stopped, its switch may be sent (lnk agent state-send %s --to KEY)\n", a.Name, a.Name)
				return nil
			},
		}
	})
	register("agent", func() *cobra.Command {
		var to string
		c := &cobra.Command{
			Use:   "state-send NAME --to PUBKEY",
			Short: "Write the agent's move, sealed to the receiver's key, to stdout: its files and memory, then, once paused, its settings and state",
			Long: "Write the agent's move as a sealed stream to stdout, for lnk agent receive on the other machine.\n" +
				"The switch (its settings, secrets, conversations and Link Harness's home) is sent only once lnk agent pause stopped it.\n" +
				"Ctrl-C, a closed pipe or a stop ends it as a failure: the receiver puts nothing in place.",
			Example:           "  lnk agent pause main && lnk agent state-send main --to lnk-stream-pub-… | ssh box lnk agent receive --key ~/.lnk/move.key",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				pub, err := stream.ParsePublicKey(to)
				if err != nil {
					return Usage(err.Error(), "lnk key new --out FILE on the receiving machine makes its key and prints the public half")
				}
				if f, ok := c.OutOrStdout().(*os.File); ok && isTerminal(f) {
					return Usage("stdout is a terminal: the sealed stream goes into a pipe", "lnk agent state-send "+args[0]+" --to KEY | lnk agent receive --key FILE")
				}
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
				defer stop()
				s := &move.Send{Home: home, Name: a.Name, To: pub,
					ReadyToSwitch: func() error { return readyToSwitch(home, a) },
					Note:          func(n string) { fmt.Fprintln(c.ErrOrStderr(), "lnk: "+n) },
				}
				if err := s.Run(ctx, c.OutOrStdout()); err != nil {
					return moveErr(err, a.Name)
				}
				return nil
			},
		}
		c.Flags().StringVar(&to, "to", "", "the receiving machine's public key (lnk-stream-pub-…)")
		return c
	})
	register("agent", func() *cobra.Command {
		var keyFile string
		var newKey, start bool
		c := &cobra.Command{
			Use:   "receive --key FILE",
			Short: "Read an agent's move on stdin, sealed to the key in FILE, and put it in place once all of it authenticated",
			Long: "Read a move (lnk agent state-send) on stdin into ~/Link/Agents/.moving/<agent id>, checking every entry and file,\n" +
				"then put in place only its files folder and the state this machine's Link Harness names. A new agent's grants are the stream's\n" +
				"but for those that open this machine or reach past its sandbox, each printed as the lnk agent allow flag that gives it;\n" +
				"its buckets but for those whose endpoint is this machine or its network, each printed with the lnk agent bucket add that gives it.",
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if (keyFile == "") == !newKey {
					return Usage("one of --key FILE (the file lnk key new wrote) or --new-key is needed", "lnk key new --out FILE makes a receiver's key")
				}
				if f, ok := c.InOrStdin().(*os.File); ok && isTerminal(f) {
					return Usage("stdin is a terminal: the move comes from a pipe", "lnk agent state-send NAME --to KEY | lnk agent receive --key FILE")
				}
				var key *stream.PrivateKey
				var err error
				if newKey {
					// A key for this move alone, held in memory: its
					// public half goes back first, on stdout.
					var pub *stream.PublicKey
					if pub, key, err = stream.NewKeyPair(); err != nil {
						return err
					}
					fmt.Fprintln(c.OutOrStdout(), pub.String())
				} else if key, err = readStreamKey(keyFile); err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
				defer stop()
				home := os.Getenv("HOME")
				r := &move.Receive{Home: home, Key: key,
					Note:    func(n string) { fmt.Fprintln(c.ErrOrStderr(), "lnk: "+textsafe.Line(n)) },
					Stopped: func(name string) error { return stoppedForUndo(home, name) }}
				if start {
					r.Answer = func(got *move.Received) error { return answerHere(c, home, got) }
				}
				got, err := r.Run(ctx, c.InOrStdin())
				if err != nil {
					return auditRefusal("agent receive", "", moveErr(err, ""))
				}
				printReceived(c, got, start)
				if start {
					// Last, for the machine it left: its status as JSON.
					a, err := caps.LoadAgent(home, got.Name)
					if err != nil {
						return err
					}
					return printStatus(c, home, a, true)
				}
				return nil
			},
		}
		c.Flags().StringVar(&keyFile, "key", "", "the receiver's private key file (lnk key new --out FILE)")
		c.Flags().BoolVar(&newKey, "new-key", false, "make a key for this move alone and print its public half first (what lnk agent move runs here over ssh)")
		c.Flags().BoolVar(&start, "start", false, "start the agent once in place and keep it only if it answers, running with its ID (what lnk agent move runs here over ssh)")
		return c
	})
}

// answerHere starts the agent a receive put in place (its start's
// output on stderr) and returns nil only once it answers, running, with
// its ID; else it stops what it started and says why, and the receive
// undoes everything.
func answerHere(c *cobra.Command, home string, got *move.Received) error {
	out := c.OutOrStdout()
	c.SetOut(c.ErrOrStderr())
	err := startAgent(c, got.Name, nil, startFlags{answering: true})
	c.SetOut(out)
	a, lerr := caps.LoadAgent(home, got.Name)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if err == nil {
		st, serr := agentlife.ReadStatus(home, a)
		switch {
		case serr != nil:
			err = serr
		case !st.Running:
			err = fmt.Errorf("agent %s started but is not running", got.Name)
		case a.ID != got.ID:
			err = fmt.Errorf("agent %s here has ID %s, not %s", got.Name, a.ID, got.ID)
		}
	}
	if err != nil {
		if _, serr := stopAgent(home, a); serr != nil {
			return fmt.Errorf("%w; stopping it: %w", err, serr)
		}
		return err
	}
	return nil
}

// readyToSwitch refuses the switch unless agent a is paused and stopped.
func readyToSwitch(home string, a *caps.Agent) error {
	paused, quiet, err := caps.Paused(home, a.Name)
	if err != nil {
		return err
	}
	if !paused || !quiet {
		return Refused(fmt.Errorf("agent %s is not paused: its switch is sent only once it is", a.Name), "lnk agent pause "+a.Name)
	}
	st, err := agentlife.ReadStatus(home, a)
	if err != nil {
		return err
	}
	if st.Running {
		return Refused(fmt.Errorf("agent %s runs again: its switch is sent only while it is stopped", a.Name), "lnk agent pause "+a.Name)
	}
	return nil
}

// printReceived says what a receive put in place, and each grant and
// bucket it left out as the command that would give it.
func printReceived(c *cobra.Command, got *move.Received, started bool) {
	out := c.OutOrStdout()
	how := "came back"
	if got.New {
		how = "arrived"
	}
	fmt.Fprintf(out, "agent %s (id %s) %s: %s put in place\n", got.Name, got.ID, how, strings.Join(got.Placed, ", "))
	for _, a := range got.Allow {
		if team, ok := strings.CutPrefix(a, "team:"); ok {
			fmt.Fprintf(out, "  left out, team %s's shared folder: only this machine's team file ([teams.%s]) gives it\n", textsafe.Line(team), textsafe.Line(team))
			continue
		}
		fmt.Fprintf(out, "  left out: lnk agent allow %s %s\n", got.Name, textsafe.Line(a))
	}
	for _, b := range got.Buckets {
		fmt.Fprintf(out, "  left out, %s\n", textsafe.Line(b))
	}
	if started {
		fmt.Fprintf(out, "agent %s runs here\n", got.Name)
		return
	}
	fmt.Fprintf(out, "lnk agent start %s runs it here\n", got.Name)
}

// moveErr gives a move's error its exit code and hint.
func moveErr(err error, name string) error {
	var ex *ExitError
	if errors.As(err, &ex) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return Fail(ExitFailure, fmt.Errorf("the move was stopped before its end: nothing of it is put in place"))
	}
	for _, r := range []error{stream.ErrFormat, stream.ErrWrongRecipient, stream.ErrDamaged, stream.ErrTruncated, stream.ErrTrailing,
		moveentry.ErrFormat, moveentry.ErrEntry, moveentry.ErrPath, moveentry.ErrDepth, moveentry.ErrHash,
		moveentry.ErrOrder, moveentry.ErrEnd, moveentry.ErrSize, move.ErrNameHeld, move.ErrAreaLink} {
		if errors.Is(err, r) {
			return Refused(fmt.Errorf("%s: nothing of it was put in place", textsafe.Line(err.Error())), "lnk agent state-send NAME --to KEY on the machine the agent is on sends it whole (lnk agent list shows the agents here)")
		}
	}
	if errors.Is(err, move.ErrNoAnswer) {
		return Fail(ExitFailure, fmt.Errorf("%s: nothing of it is kept here", textsafe.Line(err.Error())), "lnk agent status NAME on the machine it came from shows it, still there")
	}
	if errors.Is(err, move.ErrBusy) {
		return Refused(err, "wait for the other move to end; lnk agent status "+name+" shows the agent")
	}
	if perr := placingErr(err, name); perr != nil {
		return perr
	}
	if errors.Is(err, caps.ErrDuplicateID) || errors.Is(err, caps.ErrMovedAway) {
		return Refused(err, "lnk agent list shows the agents here by name and ID")
	}
	if name != "" {
		return agentErr(err, name)
	}
	return err
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
