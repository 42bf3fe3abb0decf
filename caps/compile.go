package caps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Layer is one spec and whose it is: "agent" (Config/sandbox.toml, or a
// file or flags given to lnk sandbox run) or "harness"
// (~/.lnk/harnesses/<h>.toml).
type Layer struct {
	Whose string
	File  string
	Spec  *Spec
}

// Input is what Compile joins: the owner's HOME, the agent (nil for a
// sandbox without one), the folder relative paths are taken against when
// there is no agent, and the layers.
type Input struct {
	Home    string
	Agent   *Agent
	Base    string
	Own     *Layer // the agent's layer (nil: nothing granted beyond defaults)
	Harness *Layer // the harness's layer, or nil
}

// DefaultCommands is Link's [commands] list where a spec names none.
var DefaultCommands = []string{"sh", "bash", "cat", "ls", "grep", "sed", "awk", "find", "head", "tail", "wc", "sort", "diff", "git"}

// Compile joins the layers, applies the agent layer's defaults, checks
// every rule and returns the one value the sandbox is built from. On any
// refusal it returns the first, naming the rule.
func Compile(in Input) (*Compiled, error) {
	home, err := filepath.EvalSymlinks(filepath.Clean(in.Home))
	if err != nil || !filepath.IsAbs(home) {
		return nil, at(ErrBadPath, quote(in.Home), "HOME must be an existing absolute folder")
	}
	l := Layout{Home: home}
	c, err := newChecker(l, "")
	if err != nil {
		return nil, err
	}
	out := &Compiled{Home: home, Tools: map[string]Tool{}, Teams: map[string]TeamGrant{}, Limits: DefaultLimits}
	base := in.Base
	if in.Agent != nil {
		c.self = in.Agent.Name
		out.AgentID, out.AgentName = in.Agent.ID, in.Agent.Name
		out.AgentDir, out.FilesDir = l.AgentDir(in.Agent.Name), l.FilesDir(in.Agent.Name)
		base = out.FilesDir
	}
	agent := &Layer{Whose: "agent", Spec: &Spec{}}
	if in.Own != nil && in.Own.Spec != nil {
		agent = in.Own
	}
	layers := []*Layer{withDefaults(agent, in.Agent != nil)}
	if in.Harness != nil && in.Harness.Spec != nil {
		if err := harnessOnlyAgentKeys(in.Harness); err != nil {
			return nil, err
		}
		layers = append(layers, in.Harness)
	}
	if err := compileFiles(c, base, out, layers); err != nil {
		return nil, err
	}
	if in.Agent != nil {
		if err := compileCollections(l, in.Agent.Name, out); err != nil {
			return nil, err
		}
	}
	if err := compileNet(out, layers); err != nil {
		return nil, err
	}
	if err := compileTools(out, layers); err != nil {
		return nil, err
	}
	if err := compileLimits(&out.Limits, agent.Spec); err != nil {
		return nil, err
	}
	out.Hidden = append([]string{l.Settings(), l.Agents(), l.History(), l.Teams()}, c.runtimeDirs...)
	return out, nil
}

// withDefaults fills what the agent's layer leaves unsaid with Link's
// defaults: [internet] on for any host, Link's [commands], and for an
// agent [files] write = ["work"] in its Home.
func withDefaults(a *Layer, isAgent bool) *Layer {
	s := *a.Spec
	if s.Internet == nil {
		on := true
		s.Internet = &InternetSpec{On: &on}
	}
	if s.Commands == nil {
		s.Commands = &CommandsSpec{Allow: DefaultCommands}
	}
	if isAgent && (s.Files == nil || s.Files.Write == nil) {
		f := FilesSpec{Write: []string{"work"}}
		if s.Files != nil {
			f.Read = s.Files.Read
		}
		s.Files = &f
	}
	return &Layer{Whose: a.Whose, File: a.File, Spec: &s}
}

// harnessOnlyAgentKeys refuses what only the agent's own spec may set.
func harnessOnlyAgentKeys(h *Layer) error {
	s := h.Spec
	if (s.Tools != nil && len(s.Tools.Strangers) > 0) || s.Tool != nil || s.Run != nil {
		return at(ErrHarnessOnly, h.File)
	}
	return nil
}

// compileFiles turns [files] read/write of every layer into Folders,
// ReadOnly, each path checked and resolved without following a link.
func compileFiles(c checker, base string, out *Compiled, layers []*Layer) error {
	var reads, writes []string
	ids := map[string]FileID{}
	for _, ly := range layers {
		if ly.Spec.Files == nil {
			continue
		}
		for _, p := range ly.Spec.Files.Write {
			abs, id, err := checkedPath(c, base, p, true)
			if err != nil {
				return err
			}
			writes, ids[abs] = appendNew(writes, abs), id
		}
		for _, p := range ly.Spec.Files.Read {
			abs, id, err := checkedPath(c, base, p, false)
			if err != nil {
				return err
			}
			reads, ids[abs] = appendNew(reads, abs), id
		}
	}
	if out.FilesDir != "" && !coveredBy(out.FilesDir, writes) {
		reads = appendNew(reads, out.FilesDir)
		if _, ok := ids[out.FilesDir]; !ok {
			if _, id, err := ResolveID(out.FilesDir); err == nil {
				ids[out.FilesDir] = id
			}
		}
	}
	if err := checkNesting(reads, writes); err != nil {
		return err
	}
	for _, w := range writes {
		out.Folders = append(out.Folders, Folder{Path: w, Access: Access{Read: true, Write: true}, ID: ids[w]})
		for _, top := range []string{".git", ".envrc", ".vscode", ".idea"} {
			out.ReadOnly = append(out.ReadOnly, filepath.Join(w, top))
		}
	}
	for _, r := range reads {
		out.Folders = append(out.Folders, Folder{Path: r, Access: Access{Read: true}, ID: ids[r]})
	}
	if err := compileNested(base, c.l.Home, out, layers, writes); err != nil {
		return err
	}
	sort.Slice(out.Folders, func(i, j int) bool { return out.Folders[i].Path < out.Folders[j].Path })
	return nil
}

// compileCollections grants the agent's instructions, skills and chats
// (ReadCollections) read-only, each resolved through no link and
// recorded by device and inode: every sandbox of the agent reads them,
// none writes them (security.txt, "Run and file"). One that is missing
// (an agent made before Link made them) is left out; one that is a link
// or not a folder is refused.
func compileCollections(l Layout, name string, out *Compiled) error {
	for _, col := range ReadCollections {
		p := filepath.Join(l.OwnDir(name), col)
		kind, id, err := ResolveID(p)
		switch {
		case errors.Is(err, ErrMissing):
			continue
		case err != nil:
			return err
		case kind != KindDir:
			return at(ErrSpecNotRegular, quote(p), "it should be a folder")
		}
		out.Folders = append(out.Folders, Folder{Path: p, Access: Access{Read: true}, ID: id})
	}
	sort.Slice(out.Folders, func(i, j int) bool { return out.Folders[i].Path < out.Folders[j].Path })
	return nil
}

// checkedPath is one [files] entry made absolute, checked by the rules,
// then resolved without following a link: its path and what it names.
func checkedPath(c checker, base, p string, write bool) (string, FileID, error) {
	abs, err := GrantPath(c.l.Home, base, p)
	if err != nil {
		return "", FileID{}, err
	}
	if write {
		err = c.checkWrite(abs)
	} else {
		err = c.checkRead(abs)
	}
	if err != nil {
		return "", FileID{}, err
	}
	_, id, err := ResolveID(abs)
	if err != nil {
		return "", FileID{}, err
	}
	return abs, id, nil
}

func coveredBy(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

func appendNew(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// executable is os.Executable; a seam, so a test can make it fail.
var executable = os.Executable

// lnkDir is the folder holding the running program when it is lnk (never
// a test binary, ""): writing it would change what runs outside the
// sandbox. Where the program's path cannot be learned the rule cannot be
// checked, and the compile is refused (fail closed), never run without it.
func lnkDir() (string, error) {
	exe, err := executable()
	if err == nil && strings.HasPrefix(filepath.Base(exe), "lnk") {
		exe, err = filepath.EvalSymlinks(exe)
	} else if err == nil {
		return "", nil
	}
	if err != nil {
		return "", &Refusal{Rule: ErrLinkOwn.Rule, Err: err,
			Reason: fmt.Sprintf("refused: where Link's own programs are cannot be learned (%v), so no grant can be checked against them (rule %s)", err, ErrLinkOwn.Rule),
			Hint:   "mount /proc, and run Link from where make install put it"}
	}
	return filepath.Dir(exe), nil
}
