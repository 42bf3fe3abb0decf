package caps

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
)

// Link Harness's sandbox (security.txt "Where Link keeps an agent's
// things"): the agent's own grants, and of its own folder what Link
// Harness needs — its home, ~/Link/Agents/<agent>/Harnesses/link (0700),
// written and its HOME; its conversations, Agent/chats, written; Agent/
// read, for its instructions, skills and memory/ (its notes), never
// written; schedule/ hidden, never reached. Link's
// own run, file and memory tools (run-<id>, file-<id>, memory-<id>) are
// its tools, every call going through without asking but logged by its
// proxy: run and file run each call in a sandbox made from this same
// sandbox file, so what the model asks of them is bounded by the agent's
// grants, not widened; memory reads only the agent's memory/ and
// conversations and writes only its notes and index (security.txt
// "Memory"). With the sandbox off none is granted. A local model on this machine's loopback
// (agent.toml's [model], the built-in's recorded base_url) is a granted
// localhost port its proxy passes for inference only.

// LinkHarness is Link Harness's name among an agent's harnesses.
const LinkHarness = "link"

// ErrNotLinkHarness is returned for an agent whose agent.toml names
// another harness's [start] command.
var ErrNotLinkHarness = errors.New("the agent runs another harness ([start] command)")

// CompileLinkHarness compiles agent name's sandbox as Link Harness runs
// in it. Its calls are logged as the agent's own.
func CompileLinkHarness(home, name string) (*Compiled, error) {
	l, a, err := agentIn(home, name)
	if err != nil {
		return nil, err
	}
	if !a.RunsLinkHarness() {
		return nil, fmt.Errorf("%w: agent %s", ErrNotLinkHarness, name)
	}
	hh := l.HarnessHome(name, LinkHarness)
	for _, d := range []string{filepath.Dir(hh), hh} {
		if err := mkdirPrivate(d); errors.Is(err, ErrSymlink) {
			return nil, at(ErrSymlink, quote(d), "Link Harness's home is a folder of the agent's own, never a link: lnk agent harness list "+name+" shows its harnesses")
		} else if err != nil {
			return nil, err
		}
	}
	hid, err := checkHarnessHome(hh, name)
	if err != nil {
		return nil, err
	}
	c, err := CompileAgent(home, name)
	if err != nil {
		return nil, err
	}
	c.Harness, c.HarnessHome = LinkHarness, hh
	c.Folders = append(c.Folders, Folder{Path: hh, Access: Access{Read: true, Write: true}, ID: hid})
	// The Agent/ folder is bound whole, read-only, so its prompt's files
	// are read within one mount (the prompt's reader crosses none);
	// chats/ is bound again over it, written, and schedule/ hidden under
	// an empty mount. instructions/ and skills/ come with Agent/.
	own := l.OwnDir(name)
	kind, oid, err := ResolveID(own)
	if err != nil {
		return nil, err
	}
	if kind != KindDir {
		return nil, at(ErrSpecNotRegular, quote(own), "it should be a folder")
	}
	chats := filepath.Join(own, "chats")
	folders := c.Folders[:0:0]
	for _, f := range c.Folders {
		switch f.Path {
		case filepath.Join(own, "instructions"), filepath.Join(own, "skills"):
			continue // in Agent/'s own mount
		case chats:
			f.Access.Write = true
		}
		folders = append(folders, f)
	}
	c.Folders = append(folders, Folder{Path: own, Access: Access{Read: true}, ID: oid})
	c.Hidden = append(c.Hidden, filepath.Join(own, "schedule"))
	sort.Slice(c.Folders, func(i, j int) bool { return c.Folders[i].Path < c.Folders[j].Path })
	if !a.NoSandbox {
		if c.Tools == nil {
			c.Tools = map[string]Tool{}
		}
		for _, t := range []string{"run-", "file-", "memory-", "scheduler-"} {
			c.Tools[t+a.ID] = Tool{AskNone: true}
		}
	}
	if a.Model != nil {
		// The model, and its fallback when that is on this machine too,
		// each reached on loopback for inference only.
		for _, m := range []*AgentModel{a.Model, a.Model.Fallback} {
			if m == nil {
				continue
			}
			if port := m.LoopbackPort(); port != 0 {
				if !slices.Contains(c.LocalhostPorts, port) {
					c.LocalhostPorts = append(c.LocalhostPorts, port)
					slices.Sort(c.LocalhostPorts)
				}
				if !slices.Contains(c.LocalModelPorts, port) {
					c.LocalModelPorts = append(c.LocalModelPorts, port)
				}
			}
		}
	}
	return c, nil
}
