package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/move"
)

// lnk agent recover NAME: undoes a receive or restore of agent NAME that a
// kill cut short while it put things in place (services/move's journal),
// found by the name its journal recorded. A verb of its own, since the
// agent may not be found by name at all: a receive of an agent new here
// killed before its agent.toml was written leaves no agent for lnk agent
// start or status to load, and starting one that the undo removes would
// read wrong. lnk agent start, receive and restore still undo a placing
// of an agent they find first.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{
			Use:   "recover NAME",
			Short: "Undo a receive or restore of the agent that a kill cut short while it put things in place (lnk agent list names each); an agent new here is removed",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				name := args[0]
				if err := caps.CheckName(name); err != nil {
					return agentErr(err, name)
				}
				return auditRefusal("agent recover", name, recoverAgent(c, os.Getenv("HOME"), name))
			},
		}
	})
}

// recoverAgent undoes each placing journal that names agent name.
func recoverAgent(c *cobra.Command, home, name string) error {
	js, err := move.Journals(home)
	if err != nil {
		return err
	}
	var unreadable []move.Journal
	undone := 0
	for _, j := range move.JournalsOf(js, name) {
		if j.Err != nil {
			unreadable = append(unreadable, j)
			continue
		}
		rec, err := move.Recover(home, j.ID, func(n string) error { return stoppedForUndo(home, n) })
		if errors.Is(err, move.ErrBusy) {
			return Refused(fmt.Errorf("agent %s is being put in place by a %s under way, not one cut short", name, j.Kind),
				"wait for it to end; lnk agent list shows it while it runs")
		}
		if err != nil {
			if perr := placingErr(err, name); perr != nil {
				return perr
			}
			return err
		}
		if rec != nil {
			fmt.Fprintln(c.OutOrStdout(), textsafe.Line(rec.String()))
			undone++
		}
	}
	if len(unreadable) > 0 {
		return placingErr(fmt.Errorf("%w: ~/.lnk/moving/%q: %v", move.ErrJournal, unreadable[0].File, unreadable[0].Err), name)
	}
	if undone == 0 {
		return Fail(ExitMissing, fmt.Errorf("no receive or restore of agent %s was cut short here", name), "lnk agent list names each one cut short")
	}
	return nil
}

// printJournals names each placing journal in ~/.lnk/moving, one line
// each (lnk agent list): cut short, with the command that undoes it, or
// under way. prefix begins each line.
func printJournals(w io.Writer, home, prefix string) error {
	js, err := move.Journals(home)
	if err != nil {
		return fmt.Errorf("the placing journals (~/.lnk/moving): %w", err)
	}
	for _, j := range js {
		switch {
		case j.Err != nil:
			fmt.Fprintf(w, "%sCUT SHORT  ~/.lnk/moving/%q: a placing journal Link cannot read (%s): check ~/Link/Agents by hand, then remove it\n",
				prefix, j.File, textsafe.Line(j.Err.Error()))
		case j.UnderWay:
			fmt.Fprintf(w, "%sUNDER WAY  a %s of agent %s (id %s) is putting it in place\n", prefix, j.Kind, j.Name, j.ID)
		case j.New:
			fmt.Fprintf(w, "%sCUT SHORT  a %s of agent %s (id %s), new here, was killed while it put things in place: lnk agent recover %s removes what it left\n",
				prefix, j.Kind, j.Name, j.ID, j.Name)
		default:
			fmt.Fprintf(w, "%sCUT SHORT  a %s of agent %s (id %s) was killed while it put things in place: lnk agent recover %s undoes it (lnk agent start %s too)\n",
				prefix, j.Kind, j.Name, j.ID, j.Name, j.Name)
		}
	}
	return nil
}

// cutShortHint is the hint for agent name, not found: lnk agent recover
// when a placing journal names it ("" when none does).
func cutShortHint(home, name string) string {
	js, err := move.Journals(home)
	if err != nil {
		return "lnk agent list names any receive of it cut short (~/.lnk/moving could not be read: " + textsafe.Line(err.Error()) + ")"
	}
	for _, j := range move.JournalsOf(js, name) {
		if j.Err == nil && !j.UnderWay {
			return "a " + j.Kind + " of agent " + name + " (id " + j.ID + ") was cut short here: lnk agent recover " + name + " removes what it left"
		}
	}
	return ""
}
