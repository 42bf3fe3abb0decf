package move

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
)

// Send options.
type Send struct {
	Home string
	Name string
	To   *stream.PublicKey
	// ReadyToSwitch is asked between the copy and the switch, and again
	// before the end: it returns an error unless the agent is paused and
	// stopped.
	ReadyToSwitch func() error
	// Note is told, one line each, what was not sent and why.
	Note func(string)
}

// area is where an area of the stream is read from on the sending side,
// relative to the agent's folder, and whether each file is copied aside
// before it is sent.
type area struct {
	name, rel string
	aside     bool
}

var (
	copyAreas   = []area{{"files", "Home", false}, {"memory", "Agent/memory", true}}
	switchAreas = []area{{"chats", "Agent/chats", false}, {"instructions", "Agent/instructions", false}, {"skills", "Agent/skills", false}}
	homeArea    = area{"home", "Harnesses/" + caps.LinkHarness, false}
)

// Run writes agent s.Name's move to out. On any error, ctx's end among
// them, it returns before the stream's final record, so no receiver
// takes what it wrote.
func (s *Send) Run(ctx context.Context, out io.Writer) error {
	if s.Note == nil {
		s.Note = func(string) {}
	}
	home, err := filepath.EvalSymlinks(s.Home)
	if err != nil {
		return fmt.Errorf("HOME: %w", err)
	}
	a, err := caps.LoadAgent(home, s.Name)
	if err != nil {
		return err
	}
	unlock, err := lockMove(home, a.ID)
	if err != nil {
		return err
	}
	defer unlock()
	l := caps.Layout{Home: home}
	agent, err := ownerfile.OpenPath(l.AgentDir(a.Name), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return fmt.Errorf("opening agent %s's folder: %w", a.Name, err)
	}
	defer unix.Close(agent)
	sending, err := openSending(l)
	if err != nil {
		return err
	}
	defer unix.Close(sending)

	bw := bufio.NewWriterSize(out, 1<<20)
	sw, err := stream.NewWriter(bw, s.To)
	if err != nil {
		return err
	}
	ew, err := moveentry.NewWriter(sw, moveentry.Head{ID: a.ID, Name: a.Name, Harness: a.Harness})
	if err != nil {
		return err
	}
	t := &tree{ctx: ctx, w: ew, sending: sending, note: s.Note}
	if err := ew.Phase(moveentry.PhaseCopy); err != nil {
		return err
	}
	for _, ar := range copyAreas {
		if err := t.area(agent, ar); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("the move was stopped before its switch: %w", err)
	}
	if s.ReadyToSwitch != nil {
		if err := s.ReadyToSwitch(); err != nil {
			return err
		}
	}
	if err := ew.Phase(moveentry.PhaseSwitch); err != nil {
		return err
	}
	set, err := settings(home, l, a, s.To)
	if err != nil {
		return err
	}
	if err := ew.Settings(*set); err != nil {
		return err
	}
	areas := switchAreas
	if a.RunsLinkHarness() {
		areas = append(areas[:len(areas):len(areas)], homeArea)
	} else {
		s.Note("harness " + a.Harness + "'s home is not sent: this Link names no state of a harness from outside it")
	}
	for _, ar := range areas {
		if err := t.area(agent, ar); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("the move was stopped before its end: %w", err)
	}
	// Still paused and stopped: an agent started during its switch could
	// have changed what was sent, so the stream is left without its end.
	if s.ReadyToSwitch != nil {
		if err := s.ReadyToSwitch(); err != nil {
			return err
		}
	}
	if err := ew.End(); err != nil {
		return err
	}
	if err := sw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// openSending opens ~/Link/Agents/.sending (0700, made when missing),
// through no link.
func openSending(l caps.Layout) (int, error) {
	agents, err := ownerfile.OpenPath(l.Agents(), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", l.Agents(), err)
	}
	defer unix.Close(agents)
	return ownerfile.MakeDir(agents, ".sending", unix.O_RDONLY, ownerfile.PrivateDir)
}
