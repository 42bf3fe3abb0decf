package move

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
)

// ErrNameHeld refuses an agent whose name an agent here has, with
// another ID.
var ErrNameHeld = errors.New("move: an agent here has that name, with another ID")

// Receive options.
type Receive struct {
	Home string
	Key  *stream.PrivateKey
	// Note is told, one line each, what was left out and why.
	Note func(string)
	// Answer, when set, is asked once everything is in place and before
	// the receive ends: an error (the agent does not answer here,
	// running, with its ID) undoes the whole placing, so a switch that
	// fails before this end answers leaves nothing here. It stops what
	// it started before it returns an error.
	Answer func(got *Received) error
	// Stopped returns nil only while agent name is stopped: asked before
	// a placing of this agent that a kill cut short is undone (recover.go),
	// which is done first. With none, such a placing refuses the receive.
	Stopped func(name string) error
}

// ErrNoAnswer is a receive undone because the agent did not answer
// (Receive.Answer).
var ErrNoAnswer = errors.New("move: the agent does not answer here, so nothing of it is kept")

// Received says what a receive put in place.
type Received struct {
	ID, Name string
	New      bool     // the agent was not here before
	Placed   []string // the areas put in place
	Allow    []string // grants left out, as lnk agent allow flags
	Buckets  []string // buckets left out: why, and the lnk agent bucket add that gives each again
}

// staging is a receive's folder, ~/Link/Agents/.moving/<agent id>.
type staging struct {
	moving int    // ~/Link/Agents/.moving
	agents int    // ~/Link/Agents (O_PATH) when moving is .moving; -1 for a restore's
	id     string // its name there
	rel    string // its path below ~/Link/Agents, for the placing journal
	fd     int    // the folder
	parent string // the last parent opened, and its handle
	pfd    int
	buf    []byte // a file's copy buffer
}

// Run reads a move's sealed stream from in and, once all of it
// authenticated, puts the agent in place. On any refusal or error the
// staging folder is removed and nothing of the agent here has changed.
func (r *Receive) Run(ctx context.Context, in io.Reader) (*Received, error) {
	if r.Note == nil {
		r.Note = func(string) {}
	}
	home, err := filepath.EvalSymlinks(r.Home)
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	sr, err := stream.NewReader(bufio.NewReaderSize(in, 1<<20), r.Key)
	if err != nil {
		return nil, err
	}
	er, err := moveentry.NewReader(sr)
	if err != nil {
		return nil, err
	}
	e, err := er.Next()
	if err != nil {
		return nil, err
	}
	head := e.Head
	got := &Received{ID: head.ID, Name: head.Name}
	if err := secrets.CheckAgentID(head.ID); err != nil {
		return nil, fmt.Errorf("%w: its head's ID is not an agent's", moveentry.ErrFormat)
	}
	if err := caps.CheckName(head.Name); err != nil {
		return nil, err
	}
	unlock, err := lockMove(home, head.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// A placing of this agent cut short is undone before anything else:
	// the agent here is then as it was before it.
	if rec, err := recoverLocked(home, head.ID, r.Stopped); err != nil {
		return nil, err
	} else if rec != nil {
		r.Note(rec.String())
	}
	// Nor is it made while another agent's placing of its name is not
	// undone: that undo would remove it, or leave two of one name. The
	// name's lock, held to the end, keeps lnk agent create of that name
	// out from this check on (LockName).
	unlockName, err := LockName(home, head.Name)
	if err != nil {
		return nil, err
	}
	defer unlockName()
	if err := CheckNameFree(home, head.Name, head.ID); err != nil {
		return nil, err
	}
	if got.New, err = checkArrival(home, head); err != nil {
		return nil, err
	}
	pauseChecked(home)
	st, err := newStaging(home, head)
	if err != nil {
		return nil, err
	}
	defer st.remove()
	set, err := st.unpack(ctx, er)
	if err != nil {
		return nil, err
	}
	// The whole stream authenticated: only now is anything put in place.
	if err := r.place(home, st, set, got); err != nil {
		return nil, err
	}
	return got, nil
}

// checkArrival refuses, before anything is unpacked, an agent whose name
// an agent here holds with another ID, or whose ID another agent here
// has. It reports whether the agent is new here.
func checkArrival(home string, h *moveentry.Head) (bool, error) {
	a, err := caps.LoadAgent(home, h.Name)
	switch {
	case err == nil && a.ID != h.ID:
		return false, fmt.Errorf("%w: %s is agent %s here", ErrNameHeld, h.Name, a.ID)
	case err == nil:
		return false, nil // coming back
	case !errors.Is(err, caps.ErrNoAgent):
		return false, err
	}
	held, err := caps.AgentWithID(home, h.ID)
	if err != nil {
		return false, err
	}
	if held != "" {
		return false, fmt.Errorf("%w: ID %s is agent %s's here", caps.ErrDuplicateID, h.ID, held)
	}
	return true, nil
}

// newStaging makes ~/Link/Agents/.moving/<id> anew (0700), with
// move.json.
func newStaging(home string, h *moveentry.Head) (*staging, error) {
	l := caps.Layout{Home: home}
	hfd, err := ownerfile.OpenPath(home, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(hfd)
	open := ownerfile.Rule{Type: unix.S_IFDIR, Forbid: 0o022}
	link, err := ownerfile.MakeDir(hfd, "Link", unix.O_PATH, open)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", l.Link(), err)
	}
	defer unix.Close(link)
	agents, err := ownerfile.MakeDir(link, "Agents", unix.O_PATH, open)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", l.Agents(), err)
	}
	moving, err := openMoving(agents)
	if err != nil {
		unix.Close(agents)
		return nil, fmt.Errorf("opening %s/.moving: %w", l.Agents(), err)
	}
	fail := func(err error) (*staging, error) {
		unix.Close(moving)
		unix.Close(agents)
		return nil, err
	}
	if err := sweepStaging(home, moving, time.Now()); err != nil {
		return fail(err)
	}
	// A receive cut short before left its folder: what it held is
	// never built on.
	if err := ownerfile.RemoveAll(moving, h.ID); err != nil {
		return fail(err)
	}
	fd, err := ownerfile.MakeDir(moving, h.ID, unix.O_PATH, ownerfile.PrivateDir)
	if err != nil {
		return fail(err)
	}
	st := &staging{moving: moving, agents: agents, id: h.ID, rel: ".moving/" + h.ID, fd: fd, pfd: -1, buf: make([]byte, copyBuf)}
	note, _ := json.Marshal(map[string]string{"id": h.ID, "name": h.Name, "copy_came": time.Now().UTC().Format(time.RFC3339)})
	if err := ownerfile.WriteAtomic(fd, "move.json", note, ownerfile.Write{}); err != nil {
		st.remove()
		return nil, err
	}
	return st, nil
}

// remove removes the staging folder and closes its handles; a receive's
// .moving left empty goes too (removeMovingIfEmpty).
func (s *staging) remove() {
	if s.pfd >= 0 {
		unix.Close(s.pfd)
		s.pfd = -1
	}
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
		ownerfile.RemoveAll(s.moving, s.id)
		ownerfile.SyncDir(s.moving)
		if s.agents >= 0 {
			removeMovingIfEmpty(s.agents, s.moving)
			unix.Close(s.agents)
			s.agents = -1
		}
		unix.Close(s.moving)
	}
}

// unpack reads every entry into the staging folder, returning the
// switch's settings once the stream ended whole.
func (s *staging) unpack(ctx context.Context, er *moveentry.Reader) (*moveentry.Settings, error) {
	var set *moveentry.Settings
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("the receive was stopped: %w", err)
		}
		e, err := er.Next()
		if err == io.EOF {
			if set == nil {
				return nil, moveentry.ErrEnd
			}
			return set, nil
		}
		if err != nil {
			return nil, err
		}
		switch e.Kind {
		case moveentry.KindSettings:
			set = e.Settings
		case moveentry.KindDir, moveentry.KindFile, moveentry.KindLink:
			if err := s.put(e, er.Body()); err != nil {
				return nil, err
			}
		}
	}
}

// put makes entry e in the staging folder, from its parent folder's
// handle, opened beneath the staging folder through no link; a file's
// bytes are read from body.
func (s *staging) put(e *moveentry.Entry, body io.Reader) error {
	dir, base := filepath.Split(e.Path)
	dir = filepath.Clean(dir)
	pfd, err := s.parentFD(dir)
	if err != nil {
		return fmt.Errorf("unpacking %s: %w", e.Path, err)
	}
	switch e.Kind {
	case moveentry.KindDir:
		// Owner-writable while unpacking; its own bits once placed.
		if err := unix.Mkdirat(pfd, base, 0o700); err != nil {
			return fmt.Errorf("unpacking %s: %w", e.Path, err)
		}
		fd, err := ownerfile.Open(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return fmt.Errorf("unpacking %s: %w", e.Path, err)
		}
		defer unix.Close(fd)
		return unix.Fchmod(fd, e.Mode|0o700)
	case moveentry.KindLink:
		return unix.Symlinkat(e.Target, pfd, base)
	}
	fd, err := ownerfile.Open(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("unpacking %s: %w", e.Path, err)
	}
	f := fileOf(fd, e.Path)
	defer f.Close()
	// Whole records at a time, not io.Copy's 32 KiB (os.File's ReadFrom
	// would take it back to that size).
	if _, err := io.CopyBuffer(struct{ io.Writer }{f}, body, s.buf); err != nil {
		return err
	}
	return f.Chmod(fsMode(e.Mode))
}

// parentFD opens the folder rel beneath the staging folder, keeping the
// last one open for its siblings.
func (s *staging) parentFD(rel string) (int, error) {
	if rel == "." {
		return s.fd, nil
	}
	if s.pfd >= 0 && s.parent == rel {
		return s.pfd, nil
	}
	fd, err := ownerfile.OpenDir(s.fd, rel, unix.O_PATH)
	if err != nil {
		return -1, err
	}
	if s.pfd >= 0 {
		unix.Close(s.pfd)
	}
	s.parent, s.pfd = rel, fd
	return fd, nil
}
