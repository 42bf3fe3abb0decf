package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/helpers/askbroker"
)

// lnk ask list [--json], lnk ask show ID and lnk ask answer ID yes|no
// (also lnk sandbox answer): the owner's side of the waiting-question
// store (helpers/askbroker).

func init() {
	register("ask", askListCmd)
	register("ask", askShowCmd)
	register("ask", askAnswerCmd)
	register("sandbox", askAnswerCmd)
}

func openAskStore() (*askbroker.Store, error) {
	home, err := homeDir()
	if err != nil {
		return nil, err
	}
	s, err := askbroker.OpenStore(home)
	if errors.Is(err, askbroker.ErrLink) || errors.Is(err, askbroker.ErrNotPrivate) {
		return nil, Refused(fmt.Errorf("the question store: %w", err), "look at ~/.lnk/questions yourself: Link never follows a link there, and keeps it 0700")
	}
	return s, err
}

func askListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the questions waiting for your answer",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := openAskStore()
			if err != nil {
				return err
			}
			defer s.Close()
			ws, err := s.List()
			if err != nil {
				return err
			}
			if asJSON {
				if ws == nil {
					ws = []askbroker.Waiting{}
				}
				return writeJSON(c.OutOrStdout(), ws)
			}
			if len(ws) == 0 {
				fmt.Fprintln(c.ErrOrStderr(), "no question is waiting")
				return nil
			}
			askbroker.PrintWaiting(c.OutOrStdout(), ws, time.Now())
			// The table shows a call's first line alone: the owner sees
			// a question whole before allowing it.
			fmt.Fprintln(c.OutOrStdout(), "lnk ask show ID shows a question whole (every line of its call) before you answer it")
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the questions as JSON")
	return c
}

// askShowCmd prints one waiting question whole, as the dialog and the
// terminal show it (askbroker's Question.Text: the call's lines behind
// the gutter, the last line naming what is allowed and who asks), read
// from the store and cleaned again whoever wrote it.
func askShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a waiting question whole, every line of its call, as the dialog shows it",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := openAskStore()
			if err != nil {
				return err
			}
			defer s.Close()
			w, err := s.Read(args[0])
			switch {
			case errors.Is(err, askbroker.ErrNoQuestion):
				return Fail(ExitMissing, err, "lnk ask list shows the questions waiting")
			case errors.Is(err, askbroker.ErrLink), errors.Is(err, askbroker.ErrNotPrivate):
				return Refused(err)
			case err != nil:
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "[lnk question %s]\n%s\nlnk ask answer %s yes allows it once; lnk ask answer %s no refuses it\n", w.ID, w.Question.Text(), w.ID, w.ID)
			return nil
		},
	}
}

func askAnswerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "answer ID yes|no",
		Short: "Answer a waiting question: yes allows that one call, no refuses it",
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			var allow bool
			switch args[1] {
			case "yes":
				allow = true
			case "no":
			default:
				return Usage(fmt.Sprintf("answer %q is neither yes nor no", args[1]), "lnk ask answer ID yes|no")
			}
			s, err := openAskStore()
			if err != nil {
				return err
			}
			defer s.Close()
			err = s.Answer(args[0], askbroker.Answer{Allow: allow, By: "store"})
			switch {
			case errors.Is(err, askbroker.ErrNoQuestion):
				return Fail(ExitMissing, err, "lnk ask list shows the questions waiting")
			case errors.Is(err, askbroker.ErrAnswered), errors.Is(err, askbroker.ErrLink), errors.Is(err, askbroker.ErrNotPrivate):
				return Refused(err)
			case err != nil:
				return err
			}
			if allow {
				fmt.Fprintf(c.OutOrStdout(), "question %s: allowed once\n", args[0])
			} else {
				fmt.Fprintf(c.OutOrStdout(), "question %s: refused\n", args[0])
			}
			return nil
		},
	}
}
