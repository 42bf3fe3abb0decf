package move

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
)

// Restore options: going back to a backup of an agent that is here.
type Restore struct {
	Home string
	Name string
	// Stopped returns an error unless the agent is stopped: asked before
	// anything is read, and again before anything is put in place.
	Stopped func() error
	// Full refuses any link in the archives, symbolic or hard (a restore
	// of an agent not here, whose Home the agent may have written).
	// Otherwise a symbolic link in the harness's archive is unpacked as
	// a link, as a move carries one; Agent.tar never holds one.
	Full bool
	// Note is told, one line each, what was left out and why.
	Note func(string)
}

// Restored says what a restore put back.
type Restored struct {
	Placed []string // the areas put in place: home, chats, instructions, skills
}

// Run restores agent r.Name from ar (OpenBackup's, or a bucket pull's):
// each archive must be the one the last lnk agent backup here wrote
// (its size and SHA-256, in ~/.lnk/agents/<agent>/backup.json), is
// unpacked into a fresh ~/Link/Agents/.restoring-<random> with each
// entry checked by the move's rule (moveentry.TarReader), and only once
// every archive unpacked whole and matched is anything put in place: the
// harness's state paths into its home (never a .env), and the
// instructions, skills and conversations into its own folder. On any
// refusal or error the restoring folder is removed and nothing of the
// agent has changed.
func (r *Restore) Run(ctx context.Context, ar *Archives) (*Restored, error) {
	if r.Note == nil {
		r.Note = func(string) {}
	}
	home, err := filepath.EvalSymlinks(r.Home)
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	a, err := caps.LoadAgent(home, r.Name)
	if err != nil {
		return nil, err
	}
	unlock, err := lockMove(home, a.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r.Stopped == nil {
		return nil, fmt.Errorf("restore: no check that agent %s is stopped", a.Name)
	}
	if err := r.Stopped(); err != nil {
		return nil, err
	}
	// A placing of this agent cut short is undone first.
	if left, err := recoverLocked(home, a.ID, func(string) error { return r.Stopped() }); err != nil {
		return nil, err
	} else if left != nil {
		r.Note(left.String())
		// A receive undone may have removed the agent, or changed it.
		if a, err = caps.LoadAgent(home, r.Name); err != nil {
			return nil, err
		}
	}
	rec, err := readRecord(home, a.Name, a.ID)
	if err != nil {
		return nil, err
	}
	if ar.Home != nil && (!a.RunsLinkHarness() || ar.Harness != caps.LinkHarness) {
		return nil, fmt.Errorf("%w: %s is not the harness agent %s runs here", ErrNotLastBackup, HarnessArchive(ar.Harness), a.Name)
	}
	st, err := newRestoring(home)
	if err != nil {
		return nil, err
	}
	defer st.remove()
	if ar.Home != nil {
		if err := st.unpackArchive(ctx, ar.Home, rec, HarnessArchive(ar.Harness), []string{"home"}, !r.Full); err != nil {
			return nil, err
		}
	}
	if ar.Agent != nil {
		if err := st.unpackArchive(ctx, ar.Agent, rec, AgentArchive, []string{"chats", "instructions", "skills"}, false); err != nil {
			return nil, err
		}
	}
	// Every archive unpacked whole and is the last backup's: only now is
	// anything put in place, and only while the agent is still stopped.
	if err := r.Stopped(); err != nil {
		return nil, err
	}
	return r.place(home, a, st)
}

// unpackArchive unpacks the archive f into the restoring folder, checking
// each entry, then refuses it unless its bytes are those rec names.
func (s *staging) unpackArchive(ctx context.Context, f fileAt, rec *record, name string, areas []string, links bool) error {
	want := rec.sum(name)
	if want == nil {
		return fmt.Errorf("%w: the last backup here wrote no %s", ErrNotLastBackup, name)
	}
	var fst unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fst); err != nil {
		return err
	}
	if fst.Size != want.Size {
		return fmt.Errorf("%w: %s is %d bytes, the last backup's %d", ErrNotLastBackup, name, fst.Size, want.Size)
	}
	// Read from its start, whatever the handle's offset, and no further
	// than the size checked.
	h := sha256.New()
	in := io.TeeReader(io.NewSectionReader(f, 0, fst.Size), h)
	tr := moveentry.NewTarReader(bufio.NewReaderSize(in, copyBuf), fst.Size, areas, links)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("the restore was stopped: %w", err)
		}
		e, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.put(e, tr.Body()); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if _, err := io.Copy(io.Discard, in); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
		return fmt.Errorf("%w: %s's SHA-256 differs from the last backup's", ErrNotLastBackup, name)
	}
	return nil
}

// fileAt is an opened archive.
type fileAt interface {
	io.ReaderAt
	Fd() uintptr
}

// place puts what the restoring folder holds in place all or nothing,
// as a receive does (placing): each of the home's names from Link
// Harness's home's handle (placeHome: never a .env), each collection
// swapped whole into the agent's own folder; a failure at any step undoes
// every step before it, so the agent is as it was or whole as restored.
func (r *Restore) place(home string, a *caps.Agent, st *staging) (*Restored, error) {
	l := caps.Layout{Home: home}
	agent, err := ownerfile.OpenPath(l.AgentDir(a.Name), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening agent %s's folder: %w", a.Name, err)
	}
	defer unix.Close(agent)
	own, err := ownerfile.OpenDir(agent, "Agent", unix.O_PATH)
	if err != nil {
		return nil, fmt.Errorf("opening agent %s's own folder: %w", a.Name, err)
	}
	defer unix.Close(own)
	p, err := newPlacing(home, journalHead{Kind: "restore", ID: a.ID, Name: a.Name, Staging: st.rel}, st)
	if err != nil {
		return nil, err
	}
	got, err := r.placeAll(p, folder{st.fd, st.rel}, folder{agent, a.Name}, folder{own, a.Name + "/Agent"})
	if err != nil {
		return nil, p.undo(err)
	}
	p.placed()
	return got, p.end()
}

// placeAll takes each step of place, recorded in p.
func (r *Restore) placeAll(p *placing, st, agent, own folder) (*Restored, error) {
	got := &Restored{}
	if has(st.fd, "home") {
		if err := p.placeHome(st, agent, r.Note); err != nil {
			return nil, err
		}
		got.Placed = append(got.Placed, "home")
	}
	for _, c := range []string{"chats", "instructions", "skills"} {
		if !has(st.fd, c) {
			continue
		}
		if err := p.swapIn(st, c, own, c); err != nil {
			return nil, fmt.Errorf("putting %s back: %w", c, err)
		}
		if err := chmodDir(own.fd, c, 0o700); err != nil {
			return nil, err
		}
		got.Placed = append(got.Placed, c)
	}
	return got, nil
}
