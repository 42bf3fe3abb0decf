package cli

import (
	"fmt"

	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/services/runtool"
)

// endBackground stops every background command of agent name (its run
// tool's, services/runtool) and removes their records and outputs: the
// agent's delete or move. One that cannot be stopped refuses the delete.
func endBackground(home, name string) error {
	lnk, err := beside.Path("lnk") // the one running, beside itself
	if err != nil {
		return err
	}
	a, err := runtool.LoadAgent(home, name, lnk)
	if err != nil {
		return err
	}
	if err := a.Forget(); err != nil {
		return Refused(fmt.Errorf("agent %s's background commands: %w", name, err), "lnk-run-tool stop-all --agent "+name+" stops them; then delete it again")
	}
	return nil
}
