package cli

import (
	"fmt"

	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/services/runtool"
)

// endBackground stops every background command of agent name (its run
// tool's, services/runtool) and removes their records and outputs: the
// agent's delete or move (move.Leave). One that cannot be stopped
// refuses the delete, and stops the move's leave before its folder goes.
func endBackground(home, name string) error {
	a, err := runToolAgent(home, name)
	if err != nil {
		return err
	}
	if err := a.Forget(); err != nil {
		return Refused(fmt.Errorf("agent %s's background commands: %w", name, err), "lnk-run-tool stop-all --agent "+name+" stops them; then delete it again")
	}
	return nil
}

// stopBackground ends every background command of agent name's (lnk
// agent stop and restart), keeping their records until they were told.
func stopBackground(home, name string) error {
	a, err := runToolAgent(home, name)
	if err != nil {
		return err
	}
	if err := a.StopAll(); err != nil {
		return Fail(ExitFailure, fmt.Errorf("agent %s's background commands: %w", name, err), "lnk-run-tool stop-all --agent "+name+" stops them")
	}
	return nil
}

// runToolAgent is agent name as its run tool sees it, with the lnk that
// runs (beside itself) as the program its calls run through.
func runToolAgent(home, name string) (*runtool.Agent, error) {
	lnk, err := beside.Path("lnk")
	if err != nil {
		return nil, err
	}
	return runtool.LoadAgent(home, name, lnk)
}
