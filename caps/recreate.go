package caps

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"
)

// Missing Config/ files (security.txt, "One sandbox, the sandbox
// plugin's"): a missing sandbox.toml loads closed, whether or not it can
// be made again; both files are made again when absent, without
// restoring any grant (a new agent.toml names no harness, so no
// harness's layer joins); and the one that makes a file again says so,
// once, through Notice.

// Notice says what Link did on its own, one line: that a missing Config/
// file was made again. lnk points it at the command's stderr; the kernel
// leaves it on its own stderr, its log.
var Notice = func(msg string) { fmt.Fprintf(os.Stderr, "lnk: %s\n", msg) }

// closedSpec is what an agent whose sandbox.toml is missing is granted:
// no folder written, no internet (its proxy refuses every host), Link's
// [commands]; nothing else.
func closedSpec() *Spec {
	off := false
	return &Spec{Files: &FilesSpec{Write: []string{}}, Internet: &InternetSpec{On: &off}}
}

const closedHeader = "# Made again closed: Config/sandbox.toml was missing, and no grant is restored.\n# lnk agent allow grants again.\n"

// ownSpec reads the agent's Config/sandbox.toml; a missing one loads
// closed and is made again, closed.
func ownSpec(l Layout, name string) (*Spec, error) {
	path := l.SandboxFile(name)
	s, err := ReadSpecFile(path)
	if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	s = closedSpec()
	data, err := EncodeSpec(s)
	if err == nil {
		data = append([]byte(closedHeader), data...)
		err = writeFileNew(path, data)
	}
	switch {
	case errors.Is(err, unix.EEXIST):
		return ReadSpecFile(path) // made meanwhile by another lnk: that one said so
	case err != nil:
		Notice(fmt.Sprintf("agent %s: %s is missing and could not be made again (%v): its grants load closed (no folder written, no internet)", name, path, err))
	default:
		Notice(fmt.Sprintf("agent %s: %s was missing: made again closed (no folder written, no internet), no grant restored; lnk agent allow %s grants again", name, path, name))
	}
	return s, nil
}

// recreateAgentFile makes agent name's missing Config/agent.toml again:
// a new ID, no harness. Another lnk that made it first wins, and its
// file is read.
func recreateAgentFile(l Layout, name string) (*Agent, error) {
	if err := checkNoPlacing(l, name); err != nil {
		return nil, err
	}
	if err := mkdirPrivate(l.ConfigDir(name)); err != nil {
		return nil, err
	}
	a := newAgent(name)
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(a); err != nil {
		return nil, err
	}
	err := writeFileNew(l.AgentFile(name), buf.Bytes())
	if errors.Is(err, unix.EEXIST) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("agent %s: %s is missing and could not be made again: %w", name, l.AgentFile(name), err)
	}
	Notice(fmt.Sprintf("agent %s: %s was missing: made again with a new ID %s and no harness (its harness line names one again)", name, l.AgentFile(name), a.ID))
	return a, nil
}

// newAgent is a new agent's agent.toml: a random ID, the user, now.
func newAgent(name string) *Agent {
	u := strconv.Itoa(os.Getuid())
	if cur, err := user.Current(); err == nil {
		u = cur.Username
	}
	return &Agent{ID: NewID(), Name: name, Owner: u, Created: time.Now().UTC().Format(time.RFC3339)}
}

// Collections are the agent's own folder's (~/Link/Agents/<name>/Agent):
// made by CreateAgent, each 0700.
var Collections = []string{"instructions", "skills", "chats", "memory", "schedule"}

// ReadCollections are the collections every sandbox of the agent reads
// and none writes (security.txt, "Run and file").
var ReadCollections = []string{"instructions", "skills", "chats"}

// OwnDir is ~/Link/Agents/<name>/Agent, the agent's own folder.
func (l Layout) OwnDir(name string) string { return filepath.Join(l.AgentDir(name), "Agent") }

// checkNoPlacing refuses making agent name's agent.toml again while a
// placing journal is in ~/.lnk/moving (services/move): a receive of an
// agent new here makes its folder before its agent.toml, so a folder
// without one may be that half-made agent, whose undo removes only an
// agent of the ID it came with; made again with a new ID, it would be
// another agent in its place. Any journal refuses (which agent it names
// is services/move's to read); what cannot be read refuses too.
func checkNoPlacing(l Layout, name string) error {
	dir := filepath.Join(l.Settings(), "moving")
	if _, err := Resolve(dir); errors.Is(err, ErrMissing) {
		return nil
	} else if err != nil {
		return fmt.Errorf("agent %s: %s is missing, and %s cannot be read: %w", name, l.AgentFile(name), dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("agent %s: %s is missing, and %s cannot be read: %w", name, l.AgentFile(name), dir, err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".placing") {
			return at(ErrAgentFile, fmt.Sprintf("%s is missing while a receive or restore is cut short or under way (~/.lnk/moving/%s): it is not made again with a new ID", quote(l.AgentFile(name)), quote(e.Name())),
				"lnk agent list names it; lnk agent recover "+name+" undoes one cut short")
		}
	}
	return nil
}
