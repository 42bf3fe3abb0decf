package cli

import (
	"errors"
	"fmt"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/move"
)

// A receive or restore cut short while it put things in place
// (services/move's placing journal): undone by the next lnk agent
// receive, restore or start of the agent, once it is stopped.

// stoppedForUndo refuses the undo of agent name's placing cut short while
// the agent runs; an agent not here (one a receive was making) runs
// nowhere, nor one whose folder has no agent.toml yet (read as it is:
// its agent.toml is never made again here).
func stoppedForUndo(home, name string) error {
	a, err := caps.LoadAgentAsIs(home, name)
	if errors.Is(err, caps.ErrNoAgent) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := agentlife.ReadStatus(home, a)
	if err != nil {
		return err
	}
	if st.Running {
		return Refused(fmt.Errorf("agent %s runs, though a receive or restore of it was cut short while it put things in place: that is undone only while it is stopped", a.Name),
			"lnk agent stop "+a.Name+", then lnk agent start "+a.Name+" undoes it first")
	}
	return nil
}

// placingErr gives a placing journal's refusal its hint (name: the
// agent's, "" when not known); nil for any other error.
func placingErr(err error, name string) error {
	if name == "" {
		name = "NAME"
	}
	var ex *ExitError
	switch {
	case errors.As(err, &ex):
		return err
	case errors.Is(err, move.ErrJournal):
		return Refused(fmt.Errorf("%s: nothing was undone or put in place", textsafe.Line(err.Error())),
			"the journal in ~/.lnk/moving is Link's own and no agent can write it: check the agent's folder by hand (lnk agent status "+name+"), then remove that journal")
	case errors.Is(err, move.ErrNameCutShort):
		return Refused(fmt.Errorf("%s: nothing was made or put in place", textsafe.Line(err.Error())),
			"lnk agent list names it; lnk agent recover "+name+" undoes one cut short (one under way: wait for its end), then try again")
	case errors.Is(err, move.ErrNameBusy):
		return Refused(fmt.Errorf("%s: nothing was made or put in place", textsafe.Line(err.Error())),
			"wait for it to end (lnk agent list shows the agent once it is made), then try again")
	case errors.Is(err, move.ErrPlacingLeft):
		return Fail(ExitFailure, fmt.Errorf("%s", textsafe.Line(err.Error())),
			"lnk agent start "+name+" tries the undo again; lnk agent status "+name+" shows what is left")
	}
	return nil
}
