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
	var made func() error // undoes the agent's making, when new here
	if got.New {
		spec, allow, err := narrowGrants(set.Sandbox)
		if err != nil {
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
		if made, err = newAgentUndo(home, got.Name); err != nil {
			return err
		}
		_, left, err := caps.AdoptAgent(home, &in, spec)
		if err != nil {
			return err
		}
		for _, l := range left {
			r.Note("left out of agent.toml: " + l)
		}
		got.Allow = allow
	} else {
		r.Note("agent " + got.Name + " keeps the settings and grants it has here; the stream's are not used")
		if conf != nil {
			r.Note("agent " + got.Name + " keeps the buckets (" + bucket.ConfName + ") it has here; the stream's are not used")
			conf = nil // cleared by the defer above
		}
	}
	p := newPlacing()
	err = r.placeAll(p, home, st, sec, conf, got)
	if err == nil && r.Answer != nil {
		// Still undoable: the agent must answer here first.
		if aerr := r.Answer(got); aerr != nil {
			err = fmt.Errorf("%w: %w", ErrNoAnswer, aerr)
		}
	}
	if err != nil {
		err = p.undo(err)
		if made != nil {
			if uerr := made(); uerr != nil {
				err = fmt.Errorf("%w; removing agent %s made for it failed: %w", err, got.Name, uerr)
			}
		}
		got.Placed = nil
		return err
	}
	p.close()
	return nil
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
	// Made ready in the staging folder first: each area's mode.
	for _, c := range collections {
		if has(st.fd, c) {
			if err := chmodDir(st.fd, c, 0o700); err != nil {
				return err
			}
		}
	}
	if has(st.fd, "files") {
		if err := p.mergeFiles(st.fd, agent, r.Note); err != nil {
			return err
		}
		got.Placed = append(got.Placed, "files")
	}
	for _, c := range collections {
		if !has(st.fd, c) {
			continue
		}
		if err := p.swapIn(st.fd, c, own, c); err != nil {
			return fmt.Errorf("putting %s in place: %w", c, err)
		}
		got.Placed = append(got.Placed, c)
	}
	if has(st.fd, "home") {
		if !a.RunsLinkHarness() {
			r.Note("Link Harness's home is left out: agent " + a.Name + " runs another harness here")
		} else if err := p.placeHome(st.fd, agent, r.Note); err != nil {
			return err
		} else {
			got.Placed = append(got.Placed, "home")
		}
	}
	if err := p.do(func() (func() error, error) { return mergeSecrets(home, a.ID, sec, r.Note) }); err != nil {
		return err
	}
	if conf != nil {
		b, err := bucket.LoadAgent(home, a.Name)
		if err != nil {
			return err
		}
		if err := p.do(func() (func() error, error) { return b.PutConf(conf) }); err != nil {
			return fmt.Errorf("putting agent %s's %s in place: %w", a.Name, bucket.ConfName, err)
		}
		got.Placed = append(got.Placed, "buckets")
	}
	// Here again: the note of its leaving ends (written back by an undo).
	return p.do(func() (func() error, error) { return caps.TakeMovedNote(home, a.ID) })
}

// newAgentUndo returns what removes agent name, about to be made here for
// a receive, should its placing fail: its folder in ~/Link/Agents, and its
// folder in ~/.lnk/agents when there was none before.
func newAgentUndo(home, name string) (func() error, error) {
	l := caps.Layout{Home: home}
	settingsNew := false
	if _, err := os.Lstat(l.Settings() + "/agents/" + name); errors.Is(err, os.ErrNotExist) {
		settingsNew = true
	} else if err != nil {
		return nil, err
	}
	return func() error {
		agents, err := ownerfile.OpenPath(l.Agents(), unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return err
		}
		defer unix.Close(agents)
		if err := ownerfile.RemoveAll(agents, name); err != nil {
			return err
		}
		if !settingsNew {
			return nil
		}
		d, err := ownerdir.Open(home, ".lnk", "agents")
		if err != nil {
			return err
		}
		defer d.Close()
		return ownerfile.RemoveAll(int(d.Fd()), name)
	}, nil
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
func (p *placing) placeHome(stage, agent int, note func(string)) error {
	hs, err := p.makeDir(agent, "Harnesses")
	if err != nil {
		return err
	}
	defer unix.Close(hs)
	hh, err := p.makeDir(hs, caps.LinkHarness)
	if err != nil {
		return err
	}
	defer unix.Close(hh)
	src, err := ownerfile.OpenDir(stage, "home", unix.O_RDONLY)
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
		if err := p.swapIn(src, n, hh, n); err != nil {
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
