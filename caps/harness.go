package caps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// A harness's own sandbox: the agent's grants, the harness's layer
// (~/.lnk/harnesses/<harness>.toml) and the harness's home,
// ~/Link/Agents/<agent>/Harnesses/<harness> (700), written and its HOME
// (security.txt, "Running a command in its sandbox" and "Checking its
// sandbox"). lnk agent harness run and check are compiled here.

// ErrNoHarness is returned for an agent that names no harness when none
// was given, and for a harness the agent has no home for.
var ErrNoHarness = errors.New("no such harness")

// HarnessHome is ~/Link/Agents/<name>/Harnesses/<harness>.
func (l Layout) HarnessHome(name, harness string) string {
	return filepath.Join(l.AgentDir(name), "Harnesses", harness)
}

// CompileHarness compiles agent name's grants joined with harness's layer
// and its home, under the profile <harness>-<profile> (Compiled.Profile:
// "run" or "check"). harness "" is the agent's own (agent.toml's
// harness); an agent naming none is refused with ErrNoHarness. The
// agent's own harness's home is made (0700) when missing; any other
// harness must have its home in this agent's Harnesses already, so a
// name no harness of this agent has (another agent's) is refused. A home
// that is a link, lies behind one, is not a folder, is another user's or
// is open to others is refused, never repaired.
func CompileHarness(home, name, harness, profile string) (*Compiled, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if err := CheckName(profile); err != nil {
		return nil, err
	}
	l, a, err := agentIn(home, name)
	if err != nil {
		return nil, err
	}
	own := harness == "" || harness == a.Harness
	if harness == "" {
		if a.Harness == "" {
			return nil, fmt.Errorf("%w: agent %s names no harness", ErrNoHarness, name)
		}
		harness = a.Harness
	}
	if err := CheckName(harness); err != nil {
		return nil, err
	}
	hh := l.HarnessHome(name, harness)
	if own {
		for _, d := range []string{filepath.Dir(hh), hh} {
			if err := mkdirPrivate(d); errors.Is(err, ErrSymlink) {
				return nil, at(ErrSymlink, quote(d), "a harness's home is a folder of the agent's own, never a link: lnk agent harness list "+name+" shows its harnesses")
			} else if err != nil {
				return nil, err
			}
		}
	}
	id, err := checkHarnessHome(hh, name)
	if errors.Is(err, ErrMissing) {
		return nil, fmt.Errorf("%w: agent %s has no harness %s (no %s)", ErrNoHarness, name, quote(harness), hh)
	}
	if err != nil {
		return nil, err
	}
	in, err := agentInput(home, name)
	if err != nil {
		return nil, err
	}
	hs, err := readSpecIfAny(l.HarnessFile(harness))
	if err != nil {
		return nil, err
	}
	in.Harness = &Layer{Whose: "harness " + harness, File: l.HarnessFile(harness), Spec: hs}
	c, err := Compile(in)
	if err != nil {
		return nil, err
	}
	c.Harness, c.HarnessHome, c.Profile = harness, hh, harness+"-"+profile
	c.Folders = append(c.Folders, Folder{Path: hh, Access: Access{Read: true, Write: true}, ID: id})
	sort.Slice(c.Folders, func(i, j int) bool { return c.Folders[i].Path < c.Folders[j].Path })
	return c, nil
}

// checkHarnessHome checks a harness's home p, of agent's, is a folder
// reached through no link, the owner's own and open to no one else
// (0700), and returns what it is.
func checkHarnessHome(p, agent string) (FileID, error) {
	list := "lnk agent harness list " + agent + " shows its harnesses"
	kind, id, err := ResolveID(p)
	if errors.Is(err, ErrSymlink) {
		return FileID{}, at(ErrSymlink, quote(p), "a harness's home is a folder of the agent's own, never a link to another's: "+list)
	}
	if err != nil {
		return FileID{}, err
	}
	if kind != KindDir {
		return FileID{}, at(ErrSpecNotRegular, quote(p), "a harness's home is a folder: "+list)
	}
	st, err := os.Lstat(p)
	if err != nil {
		return FileID{}, err
	}
	if !sameFile(st, id) {
		return FileID{}, at(ErrMissing, quote(p), "it changed while it was checked: run again")
	}
	if err := ownedPrivate(st); err != nil {
		return FileID{}, at(ErrLooseHome, quote(p), "chmod 700 "+quote(p)+" if it is yours; "+list)
	}
	return id, nil
}

// LogName is the name c's calls are logged under: the agent's, or for a
// harness's own run or check <agent>/<profile>, so they are never taken
// for the running agent's.
func (c *Compiled) LogName() string {
	if c.Profile == "" {
		return c.AgentName
	}
	return c.AgentName + "/" + c.Profile
}

// sameFile reports whether st is the file id names.
func sameFile(st os.FileInfo, id FileID) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && uint64(s.Dev) == id.Dev && s.Ino == id.Ino
}

// ownedPrivate refuses a folder this user does not own, or that its
// group or others may read, write or pass through.
func ownedPrivate(st os.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return errors.New("no owner to check")
	case int(s.Uid) != os.Getuid():
		return fmt.Errorf("owned by uid %d", s.Uid)
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("mode %#o", st.Mode().Perm())
	}
	return nil
}

// HarnessInfo is one harness of an agent's, for lnk agent harness list.
type HarnessInfo struct {
	Name  string `json:"name"`
	Own   bool   `json:"own"`   // the one agent.toml names
	Home  string `json:"home"`  // ~/Link/Agents/<agent>/Harnesses/<name>
	Layer string `json:"layer"` // ~/.lnk/harnesses/<name>.toml, or "" when it has none
	// Refused says why the harness's home would be refused (a link, not
	// a folder, open to others), or "" when it would run. Missing is
	// only ever the agent's own, made at its first run.
	Refused string `json:"refused,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// ListHarnesses lists agent name's harnesses: each entry of its
// Harnesses folder (by name; one whose name is no harness's is left
// out), and the harness agent.toml names, whether its home exists yet
// or not. The Harnesses folder is reached through no link.
func ListHarnesses(home, name string) ([]HarnessInfo, error) {
	l, a, err := agentIn(home, name)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(l.AgentDir(name), "Harnesses")
	var names []string
	kind, err := Resolve(dir)
	switch {
	case errors.Is(err, ErrMissing):
	case err != nil:
		return nil, err
	case kind != KindDir:
		return nil, at(ErrSpecNotRegular, quote(dir), "it should be a folder")
	default:
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if CheckName(e.Name()) == nil {
				names = append(names, e.Name())
			}
		}
	}
	if a.Harness != "" && !contains(names, a.Harness) {
		names = append(names, a.Harness)
	}
	sort.Strings(names)
	out := []HarnessInfo{}
	for _, h := range names {
		hi := HarnessInfo{Name: h, Own: h == a.Harness, Home: l.HarnessHome(name, h)}
		if kind, err := Resolve(l.HarnessFile(h)); err == nil && kind == KindFile {
			hi.Layer = l.HarnessFile(h)
		}
		if _, err := checkHarnessHome(hi.Home, name); errors.Is(err, ErrMissing) {
			hi.Missing = true
		} else if err != nil {
			hi.Refused = oneLine(err.Error())
		}
		out = append(out, hi)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
