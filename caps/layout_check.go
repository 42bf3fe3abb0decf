package caps

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// The agent's layout, checked at every start (security.txt, "Where Link
// keeps an agent's things"): each folder is opened from the one before
// through internal/ownerfile, never through a link; a missing one is made
// again (0700) and said once through Notice; one that is a link, another
// user's or looser than its mode is refused, and nothing is made or
// changed below it.

// ErrLayout is the refusal of a part of an agent's layout.
var ErrLayout = rule("layout", "a part of Link's folders for the agent is a link, another user's, or looser than its mode: Link uses none of it")

// open is 0o022: no write by group or others (~/Link, ~/Link/Agents, the
// files folder, which the owner may share read-only). private is 0o077.
const (
	forbidOpen    = 0o022
	forbidPrivate = 0o077
)

// EnsureLayout checks agent name's folders and files under home, as
// `lnk agent create` made them, before a start: ~/Link/Agents/<name>
// (0700) with Agent/ and its collections (0700), Harnesses/ and the
// harness's home Harnesses/<harness> (0700) when agent.toml names one,
// Config/ (0700) with agent.toml and sandbox.toml (0600, made again when
// missing: sandbox.toml closed), Home (no write by others) and
// ~/.lnk/agents/<name>/logs (0700). A missing agent folder is
// ErrNoAgent: an agent is never made by a start.
func EnsureLayout(home, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	l, err := layoutFor(home)
	if err != nil {
		return err
	}
	hfd, err := unix.Open(l.Home, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening HOME: %w", err)
	}
	defer unix.Close(hfd)
	dir, err := openAgentDir(l, hfd, name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	own, err := layoutDir(dir, l.OwnDir(name), "Agent", forbidPrivate)
	if err != nil {
		return err
	}
	defer unix.Close(own)
	for _, c := range Collections {
		fd, err := layoutDir(own, l.OwnDir(name)+"/"+c, c, forbidPrivate)
		if err != nil {
			return err
		}
		unix.Close(fd)
	}
	files, err := layoutDir(dir, l.FilesDir(name), "Home", forbidOpen)
	if err != nil {
		return err
	}
	unix.Close(files)
	cfg, err := layoutDir(dir, l.ConfigDir(name), "Config", forbidPrivate)
	if err != nil {
		return err
	}
	defer unix.Close(cfg)
	a, err := ensureConfigFiles(l, cfg, name)
	if err != nil {
		return err
	}
	harnesses, err := layoutDir(dir, l.AgentDir(name)+"/Harnesses", "Harnesses", forbidPrivate)
	if err != nil {
		return err
	}
	defer unix.Close(harnesses)
	if a.Harness != "" {
		fd, err := layoutDir(harnesses, l.AgentDir(name)+"/Harnesses/"+a.Harness, a.Harness, forbidPrivate)
		if err != nil {
			return err
		}
		unix.Close(fd)
	}
	return makeLogsDir(l, name)
}

// makeLogsDir makes or opens ~/.lnk/agents/<name>/logs, each folder 0700,
// the owner's, reached through no link (internal/ownerdir).
func makeLogsDir(l Layout, name string) error {
	logs, err := ownerdir.Open(l.Home, ".lnk", "agents", name, "logs")
	if err != nil {
		return at(ErrLayout, quote(l.LogsDir(name))+": "+err.Error(), layoutHint(err))
	}
	return logs.Close()
}

// LogsDir is ~/.lnk/agents/<name>/logs, where the agent's logs are
// appended from outside its sandbox.
func (l Layout) LogsDir(name string) string {
	return l.Settings() + "/agents/" + name + "/logs"
}

// openAgentDir opens ~/Link/Agents/<name> from HOME, each step through no
// link: ~/Link and ~/Link/Agents with no write by others, the agent's
// folder 0700.
func openAgentDir(l Layout, hfd int, name string) (int, error) {
	steps := []struct {
		name, path string
		forbid     uint32
	}{{"Link", l.Link(), forbidOpen}, {"Agents", l.Agents(), forbidOpen}, {name, l.AgentDir(name), forbidPrivate}}
	fd, err := unix.FcntlInt(uintptr(hfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, s := range steps {
		next, err := ownerfile.OpenDir(fd, s.name, unix.O_PATH)
		unix.Close(fd)
		switch {
		case errors.Is(err, unix.ENOENT):
			return -1, fmt.Errorf("%w: %s", ErrNoAgent, name)
		case err != nil:
			return -1, at(ErrLayout, quote(s.path), layoutHint(err))
		}
		if err := ownerfile.Check(next, ownerfile.Rule{Type: unix.S_IFDIR, Forbid: s.forbid}); err != nil {
			unix.Close(next)
			return -1, at(ErrLayout, quote(s.path)+": "+err.Error(), layoutHint(err))
		}
		fd = next
	}
	return fd, nil
}

// layoutDir opens the folder name in parent, making it (0700) when
// missing, and refuses a link, another user's, or one with a bit of
// forbid set.
func layoutDir(parent int, path, name string, forbid uint32) (int, error) {
	fd, err := ownerfile.OpenDir(parent, name, unix.O_PATH)
	if errors.Is(err, unix.ENOENT) {
		fd, err = ownerfile.MakeDir(parent, name, unix.O_PATH, ownerfile.Rule{Forbid: forbid})
		if err == nil {
			Notice(fmt.Sprintf("%s was missing: made again (mode 0700, empty)", quote(path)))
			return fd, nil
		}
	}
	if err != nil {
		return -1, at(ErrLayout, quote(path)+": "+err.Error(), layoutHint(err))
	}
	if err := ownerfile.Check(fd, ownerfile.Rule{Type: unix.S_IFDIR, Forbid: forbid}); err != nil {
		unix.Close(fd)
		return -1, at(ErrLayout, quote(path)+": "+err.Error(), layoutHint(err))
	}
	return fd, nil
}

// ensureConfigFiles makes a missing agent.toml or sandbox.toml again
// (loadAgent and ownSpec, each saying so), then refuses either unless it
// is a regular file of the owner's, mode 0600 or stricter, reached
// through no link.
func ensureConfigFiles(l Layout, cfg int, name string) (*Agent, error) {
	a, err := loadAgent(l, name)
	if err != nil {
		return nil, configRefusal(err, l.AgentFile(name))
	}
	if _, err := ownSpec(l, name); err != nil {
		return nil, configRefusal(err, l.SandboxFile(name))
	}
	for _, f := range []struct{ name, path string }{{"agent.toml", l.AgentFile(name)}, {"sandbox.toml", l.SandboxFile(name)}} {
		file, err := ownerfile.OpenFile(cfg, f.name, ownerfile.Private)
		if err != nil {
			return nil, at(ErrLayout, quote(f.path)+": "+err.Error(), layoutHint(err))
		}
		file.Close()
	}
	return a, nil
}

// configRefusal is a Config/ file that is a link or not a regular file
// refused by the layout's rule, with its hint; any other error as it is.
func configRefusal(err error, path string) error {
	if errors.Is(err, ErrSpecLink) {
		return at(ErrLayout, quote(path)+": a link", layoutHint(ownerfile.ErrLink))
	}
	if errors.Is(err, ErrSpecNotRegular) {
		return at(ErrLayout, quote(path)+": not a regular file", layoutHint(ownerfile.ErrNotOwners))
	}
	return err
}

// layoutHint says what would let Link use the part again.
func layoutHint(err error) string {
	switch {
	case errors.Is(err, ownerfile.ErrLink):
		return "Link follows no link in its folders: remove the link, then lnk agent restart AGENT makes the part again (empty); lnk agent show AGENT shows what it grants"
	case errors.Is(err, ownerfile.ErrNotOwners):
		return "it must be yours and no looser than its mode: chown it to you, chmod 700 (a folder) or 600 (a file), then lnk agent restart AGENT"
	}
	return "lnk agent list shows the agents; lnk agent create makes a new one"
}
