package move

import (
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/services/bucket"
)

// collections are the areas swapped whole into the agent's own folder.
var collections = []string{"memory", "chats", "instructions", "skills"}

// place puts what the staging folder holds in place, for an agent new
// here or coming back.
func (r *Receive) place(home string, st *staging, set *moveentry.Settings, got *Received) error {
	var in caps.Agent
	if _, err := toml.Decode(string(set.Agent), &in); err != nil {
		return fmt.Errorf("%w: its agent.toml: %v", moveentry.ErrFormat, oneLine(err))
	}
	if in.ID != got.ID || in.Name != got.Name {
		return fmt.Errorf("%w: its agent.toml names another agent than its head", moveentry.ErrFormat)
	}
	// The secrets are opened before anything is placed: a blob not
	// sealed to this key refuses the whole stream.
	sec, err := openSecrets(set.Secrets, r.Key)
	if err != nil {
		return err
	}
	defer sec.Destroy()
	// So is the rclone.conf, and parsed as Link writes it.
	conf, err := openBuckets(set.Buckets, r.Key, got.ID)
	if err != nil {
		return err
	}
	defer clear(conf)
	head := journalHead{Kind: "receive", ID: got.ID, Name: got.Name, Staging: st.rel, New: got.New}
	var spec []byte
	if got.New {
		if spec, got.Allow, err = narrowGrants(set.Sandbox); err != nil {
			return err
		}
		// A bucket whose endpoint is this machine or its network is
		// left out, as a loopback grant is.
		if conf != nil {
			kept, dropped, err := bucket.NarrowReceived(conf)
			if err != nil {
				return err
			}
			for _, d := range dropped {
				got.Buckets = append(got.Buckets, droppedBucket(got.Name, d))
			}
			if len(dropped) > 0 {
				clear(conf)
				conf = kept
				defer clear(conf)
			}
		}
		if head.SettingsNew, err = settingsNew(home, got.Name); err != nil {
			return err
		}
	} else {
		r.Note("agent " + got.Name + " keeps the settings and grants it has here; the stream's are not used")
		if conf != nil {
			r.Note("agent " + got.Name + " keeps the buckets (" + bucket.ConfName + ") it has here; the stream's are not used")
			conf = nil // cleared by the defer above
		}
	}
	// Journaled before the agent is made: a kill from here on is undone.
	p, err := newPlacing(home, head, st)
	if err != nil {
		return err
	}
	if got.New {
		_, left, err := caps.AdoptAgent(home, &in, spec)
		if err != nil {
			got.Allow = nil
			return p.undo(err)
		}
		for _, l := range left {
			r.Note("left out of agent.toml: " + l)
		}
	}
	err = r.placeAll(p, home, st, sec, conf, got)
	if err == nil {
		p.placed()
		if r.Answer != nil {
			// Still undoable: the agent must answer here first.
			if aerr := r.Answer(got); aerr != nil {
				err = fmt.Errorf("%w: %w", ErrNoAnswer, aerr)
			}
		}
	}
	if err != nil {
		got.Placed = nil
		return p.undo(err)
	}
	return p.end()
}

// placeAll puts the staging folder's areas in place, each rename, the
// secrets and the rclone.conf (conf, checked; nil: none to write)
// recorded in p so a failure is undone whole.
func (r *Receive) placeAll(p *placing, home string, st *staging, sec *secrets.File, conf []byte, got *Received) error {
	a, err := caps.LoadAgent(home, got.Name)
	if err != nil {
		return err
	}
	if a.ID != got.ID {
		return fmt.Errorf("%w: %s is agent %s here", ErrNameHeld, got.Name, a.ID)
	}
	l := caps.Layout{Home: home}
	agent, err := ownerfile.OpenPath(l.AgentDir(a.Name), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return fmt.Errorf("opening agent %s's folder: %w", a.Name, err)
	}
	defer unix.Close(agent)
	own, err := ownerfile.OpenDir(agent, "Agent", unix.O_PATH)
	if err != nil {
		return fmt.Errorf("opening agent %s's own folder: %w", a.Name, err)
	}
	defer unix.Close(own)
	af, of, sf := folder{agent, a.Name}, folder{own, a.Name + "/Agent"}, folder{st.fd, st.rel}
	// Made ready in the staging folder first: each area's mode.
	for _, c := range collections {
		if has(st.fd, c) {
			if err := chmodDir(st.fd, c, 0o700); err != nil {
				return err
			}
		}
	}
	if has(st.fd, "files") {
		if err := p.mergeFiles(sf, af, r.Note); err != nil {
			return err
		}
		got.Placed = append(got.Placed, "files")
	}
	for _, c := range collections {
		if !has(st.fd, c) {
			continue
		}
		if err := p.swapIn(sf, c, of, c); err != nil {
			return fmt.Errorf("putting %s in place: %w", c, err)
		}
		got.Placed = append(got.Placed, c)
	}
	if has(st.fd, "home") {
		if !a.RunsLinkHarness() {
			r.Note("Link Harness's home is left out: agent " + a.Name + " runs another harness here")
		} else if err := p.placeHome(sf, af, r.Note); err != nil {
			return err
		} else {
			got.Placed = append(got.Placed, "home")
		}
	}
	if err := p.mergeSecrets(sec, r.Note); err != nil {
		return err
	}
	if conf != nil {
		b, err := bucket.LoadAgent(home, a.Name)
		if err != nil {
			return err
		}
		if err := p.do(journalLine{Op: opConf}, func() (func() error, error) { return b.PutConf(conf) }); err != nil {
			return fmt.Errorf("putting agent %s's %s in place: %w", a.Name, bucket.ConfName, err)
		}
		got.Placed = append(got.Placed, "buckets")
	}
	// Here again: the note of its leaving ends (written back by an undo).
	return p.takeNote()
}

// settingsNew reports whether agent name, about to be made here for a
// receive, has no folder in ~/.lnk/agents yet: an undo removes the one
// it makes.
func settingsNew(home, name string) (bool, error) {
	d, err := ownerdir.Open(home, ".lnk", "agents")
	if err != nil {
		return false, err
	}
	defer d.Close()
	var st unix.Stat_t
	err = unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return true, nil
	}
	return false, err
}

// mergeSecrets merges the secrets that came (mergeSecrets), journaled
// under the secrets' lock before they are written.
func (p *placing) mergeSecrets(sec *secrets.File, note func(string)) error {
	if err := p.check(); err != nil {
		return err
	}
	return mergeSecrets(p.home, p.head.ID, sec, note, func(added, granted []string) error {
		_, err := p.begin(journalLine{Op: opSecrets, Added: added, Granted: granted}, -1, -1, nil)
		return err
	})
}

// takeNote ends the agent's moved note, journaling what it said first so
// an undo writes it back. With no note, there is no step.
func (p *placing) takeNote() error {
	if err := p.check(); err != nil {
		return err
	}
	b, err := caps.ReadMovedNote(p.home, p.head.ID)
	if err != nil || b == nil {
		return err
	}
	if _, err := p.begin(journalLine{Op: opNote, Note: string(b)}, -1, -1, nil); err != nil {
		return err
	}
	return caps.RemoveMovedNote(p.home, p.head.ID)
}

// putNoteBack writes the note an undone step ended back, when it is not
// there.
func putNoteBack(home, id string, note []byte) error {
	return caps.PutMovedNoteBack(home, id, note)
}

// has reports whether the folder dir holds name.
func has(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// chmodDir sets the folder name's mode in dir, opened through no link.
func chmodDir(dir int, name string, mode uint32) error {
	fd, err := ownerfile.Open(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode)
}

// placeHome puts each name of the staging home in Link Harness's home,
// but a .env: keys go only as Link's settings.
func (p *placing) placeHome(stage, agent folder, note func(string)) error {
	hs, err := p.makeDir(agent, "Harnesses")
	if err != nil {
		return err
	}
	defer unix.Close(hs.fd)
	hh, err := p.makeDir(hs, caps.LinkHarness)
	if err != nil {
		return err
	}
	defer unix.Close(hh.fd)
	src, err := ownerfile.OpenDir(stage.fd, "home", unix.O_RDONLY)
	if err != nil {
		return err
	}
	names, err := readNames(src)
	if err != nil {
		unix.Close(src)
		return err
	}
	defer unix.Close(src)
	for _, n := range names {
		if n == ".env" {
			note("home/.env is left out: a harness's keys come only as Link's settings")
			continue
		}
		if err := p.swapIn(folder{src, stage.rel + "/home"}, n, hh, n); err != nil {
			return fmt.Errorf("putting home/%s in place: %w", n, err)
		}
	}
	return nil
}

// readNames lists the folder fd (read from a duplicate).
func readNames(fd int) ([]string, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "folder")
	defer f.Close()
	return f.Readdirnames(-1)
}

func oneLine(err error) string {
	b := []byte(err.Error())
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			b[i] = ' '
		}
	}
	return string(b)
}
