// Package grants makes the file tool's sandbox for an agent from its
// compiled grants ([ForAgent]): what `lnk sandbox file --agent NAME`
// builds and execs, and `lnk-file-tool serve --agent NAME` runs for each
// session.
//
// The sandbox is the agent's own, narrowed to what file needs
// (security.txt "Run and file"): its files folder (Home) read, the
// folders of it that [files] write names written, its instructions,
// skills and conversations read, and nothing else of its grants — no
// network, no tool, no other folder, and no program but lnk-file-tool.
// apply is told the same: --files Home, --agent-folder its own folder
// (~/Link/Agents/<name>/Agent, where one of those collections is), and a
// --write for each written folder of Home.
//
// # Security
//
// Holds nothing: it reads the compiled grants it is given and Lstats the
// agent folder's collections to leave out those that are absent (the
// sandbox builder still opens each never through a link).
//
// May do: nothing on its own; its caller builds the sandbox.
//
// Trusts: the compiled grants (caps checked every path and rule).
//
// Refuses: an agent whose grants write no folder of its Home (the file
// tool would only read), naming the lnk command that would allow it; a
// grant without an agent.
package grants

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"lnk.dev/lnk/caps"
)

// readCollections are the agent folder's collections the file tool
// reads: its instructions, skills and conversations (never memory/,
// which memory's service keeps).
var readCollections = []string{"instructions", "skills", "chats"}

// ErrNoFileGrant refuses an agent whose grants write no folder of its
// files folder.
var ErrNoFileGrant = errors.New("its grants write no folder of its files folder")

// NoFileGrantError is [ErrNoFileGrant] for one agent, with the command
// that would allow it.
type NoFileGrantError struct{ Agent, FilesDir string }

func (e *NoFileGrantError) Error() string {
	return fmt.Sprintf("agent %s's file tool: %v (%s)", e.Agent, ErrNoFileGrant, e.FilesDir)
}
func (e *NoFileGrantError) Unwrap() error { return ErrNoFileGrant }

// Rule names the grant rule, so lnk exits 3 (a rule refused).
func (e *NoFileGrantError) Rule() string { return "files" }

// Hint is the command that would allow it.
func (e *NoFileGrantError) Hint() string {
	return "lnk agent allow " + e.Agent + " --write work"
}

// Sandbox is the file tool's sandbox for one agent.
type Sandbox struct {
	// Grants are the agent's, narrowed to what the file tool needs.
	Grants *caps.Compiled
	// Argv runs apply: tool apply --files … --agent-folder … --write ….
	Argv []string
	// Write are the --write folders, relative to the files folder.
	Write []string
}

// ForAgent narrows c, an agent's compiled grants, to the file tool's
// sandbox, whose one program is tool (an absolute path).
func ForAgent(c *caps.Compiled, tool string) (*Sandbox, error) {
	if c.AgentName == "" || c.FilesDir == "" || c.AgentDir == "" {
		return nil, errors.New("the file tool's sandbox is an agent's: these grants name none")
	}
	if !filepath.IsAbs(tool) {
		return nil, fmt.Errorf("the file tool %q is not an absolute path", tool)
	}
	n := &caps.Compiled{
		AgentID: c.AgentID, AgentName: c.AgentName, Home: c.Home,
		AgentDir: c.AgentDir, FilesDir: c.FilesDir,
		Hidden: append([]string(nil), c.Hidden...),
		Tools:  map[string]caps.Tool{},
		Teams:  map[string]caps.TeamGrant{},
		Limits: c.Limits,
		// Commands, Internet, ports, hosts: none. The tool is the
		// sandbox's program by its own path (the builder's ExtraExec).
		Commands: []string{},
	}
	var write []string
	for _, f := range c.Folders {
		rel, ok := below(c.FilesDir, f.Path)
		if !ok {
			continue // not the files folder's: apply never reaches it
		}
		n.Folders = append(n.Folders, f)
		if f.Access.Write {
			write = append(write, rel)
		}
	}
	if len(write) == 0 {
		return nil, &NoFileGrantError{Agent: c.AgentName, FilesDir: c.FilesDir}
	}
	for _, r := range c.ReadOnly {
		if _, ok := below(c.FilesDir, r); ok {
			n.ReadOnly = append(n.ReadOnly, r)
		}
	}
	// The repositories found inside a written folder, and the folders
	// holding them, stay as the agent's sandbox has them.
	for _, f := range c.Pinned {
		if _, ok := below(c.FilesDir, f.Path); ok {
			n.Pinned = append(n.Pinned, f)
		}
	}
	for _, f := range c.NestedReadOnly {
		if _, ok := below(c.FilesDir, f.Path); ok {
			n.NestedReadOnly = append(n.NestedReadOnly, f)
		}
	}
	own := filepath.Join(c.AgentDir, "Agent")
	bound := false
	for _, name := range readCollections {
		p := filepath.Join(own, name)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			n.Folders = append(n.Folders, caps.Folder{Path: p, Access: caps.Access{Read: true}})
			bound = true
		}
	}
	argv := []string{tool, "apply", "--files", c.FilesDir}
	if bound { // else the sandbox has no such folder to hold
		argv = append(argv, "--agent-folder", own)
	}
	for _, w := range write {
		argv = append(argv, "--write", w)
	}
	return &Sandbox{Grants: n, Argv: argv, Write: write}, nil
}

// below is p relative to dir ("." for dir itself), if p is dir or in it.
func below(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok && rest != ""
}
