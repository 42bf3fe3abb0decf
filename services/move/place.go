package move

import (
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
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
	if got.New {
		spec, allow, err := narrowGrants(set.Sandbox)
		if err != nil {
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
	}
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
	if has(st.fd, "files") {
		if err := mergeFiles(st.fd, agent, r.Note); err != nil {
			return err
		}
		got.Placed = append(got.Placed, "files")
	}
	own, err := ownerfile.OpenDir(agent, "Agent", unix.O_PATH)
	if err != nil {
		return fmt.Errorf("opening agent %s's own folder: %w", a.Name, err)
	}
	defer unix.Close(own)
	for _, c := range collections {
		if !has(st.fd, c) {
			continue
		}
		if err := swapIn(st.fd, c, own, c); err != nil {
			return fmt.Errorf("putting %s in place: %w", c, err)
		}
		if err := chmodDir(own, c, 0o700); err != nil {
			return err
		}
		got.Placed = append(got.Placed, c)
	}
	if has(st.fd, "home") {
		if !a.RunsLinkHarness() {
			r.Note("Link Harness's home is left out: agent " + a.Name + " runs another harness here")
		} else if err := placeHome(st.fd, agent, r.Note); err != nil {
			return err
		} else {
			got.Placed = append(got.Placed, "home")
		}
	}
	if err := mergeSecrets(home, a.ID, sec, r.Note); err != nil {
		return err
	}
	// Here again: the note of its leaving ends.
	return caps.RemoveMovedNote(home, a.ID)
}

// has reports whether the folder dir holds name.
func has(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// swapIn puts the staging name in dst's place: exchanged with what is
// there (a link included, moved as itself, never followed), which then
// goes with the staging folder; moved when nothing is.
func swapIn(src int, name string, dst int, dstName string) error {
	err := ownerfile.Rename(src, name, dst, dstName, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOENT) {
		err = ownerfile.Rename(src, name, dst, dstName, unix.RENAME_NOREPLACE)
	}
	return err
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
func placeHome(stage, agent int, note func(string)) error {
	hs, err := ownerfile.MakeDir(agent, "Harnesses", unix.O_PATH, ownerfile.PrivateDir)
	if err != nil {
		return err
	}
	defer unix.Close(hs)
	hh, err := ownerfile.MakeDir(hs, caps.LinkHarness, unix.O_PATH, ownerfile.PrivateDir)
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
		if err := swapIn(src, n, hh, n); err != nil {
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
