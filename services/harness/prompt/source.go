package prompt

import (
	"errors"
	"fmt"
	"os"

	"lnk.dev/lnk/internal/resolve"
)

// The prompt's limits (security.txt "Link Harness").
const (
	// MaxFile is how much of each prompt file, and of each skill's head,
	// is read: past it the text is cut and the prompt says so.
	MaxFile = 64 << 10
	// MaxSkills is how many skills go into the prompt, the first by name.
	MaxSkills = 64
	// MaxDescription is how much of a skill's description goes in.
	MaxDescription = 1 << 10
)

// The files' names in Agent/, where the agent's spec names no others.
const (
	InstructionsFile = "instructions/instruction.md"
	NotesFile        = "memory/notes.md"
	SkillsDir        = "skills"
	SkillFile        = "SKILL.md"
)

// Options are what the harness's config says of the prompt.
type Options struct {
	// Instructions and Notes name the files in Agent/ ("" the defaults):
	// clean relative names, never absolute, never with "..".
	Instructions, Notes string
	// AgentWritesInstructions: the sandbox file's [files] write names
	// instructions/, so the agent, not only the owner, may have written them.
	AgentWritesInstructions bool
	// Logf says each file left out or cut, once, with its reason.
	Logf func(format string, args ...any)
}

// Source reads the prompt's files through the Agent/ folder's handle.
type Source struct {
	root *resolve.Root
	o    Options
}

// Open holds a duplicate of agentDir (the Agent/ folder's handle, opened
// by the caller never through a link); agentDir stays the caller's.
func Open(agentDir *os.File, o Options) (*Source, error) {
	if o.Instructions == "" {
		o.Instructions = InstructionsFile
	}
	if o.Notes == "" {
		o.Notes = NotesFile
	}
	for _, n := range []string{o.Instructions, o.Notes} {
		if err := resolve.ValidatePath(n); err != nil {
			return nil, fmt.Errorf("prompt file %q refused: %w (a prompt file is a name inside the agent's own folder, never with ..)", n, err)
		}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	dup, err := dupFile(agentDir)
	if err != nil {
		return nil, err
	}
	root, err := resolve.NewRootFile(dup)
	if err != nil {
		return nil, fmt.Errorf("the agent's folder: %w", err)
	}
	return &Source{root: root, o: o}, nil
}

// Close lets go of the folder's handle.
func (s *Source) Close() error { return s.root.Close() }

// Prompt is what the files said at one message.
type Prompt struct {
	Instructions string // "" when there is none
	Notes        string
	Skills       []Skill
	// AgentWritesInstructions is Options' own: the instructions' heading.
	AgentWritesInstructions bool
}

// Skill is one skill's name and description.
type Skill struct {
	Name        string
	Description string
}

// Read reads every file anew. A file left out is logged and missing from
// the answer; only a failure of the folder itself is an error.
func (s *Source) Read() (*Prompt, error) {
	p := &Prompt{AgentWritesInstructions: s.o.AgentWritesInstructions}
	var err error
	if p.Instructions, err = s.readFile(s.o.Instructions); err != nil {
		return nil, err
	}
	if p.Notes, err = s.readFile(s.o.Notes); err != nil {
		return nil, err
	}
	if p.Skills, err = s.readSkills(); err != nil {
		return nil, err
	}
	return p, nil
}

// readFile is a prompt file's text, cut past MaxFile (and said), or ""
// when it is missing or left out (and logged).
func (s *Source) readFile(name string) (string, error) {
	b, cut, err := readHead(s.root, name, MaxFile)
	if err != nil {
		if left, why := leftOut(err); left {
			if why != "" {
				s.o.Logf("prompt: %s left out: %s", name, why)
			}
			return "", nil
		}
		return "", fmt.Errorf("prompt: reading %s: %w", name, err)
	}
	text := cleanText(b)
	if cut {
		s.o.Logf("prompt: %s cut at %d bytes (a prompt file is read to %d)", name, len(b), MaxFile)
		text += fmt.Sprintf("\n[Link Harness: %s was cut here, past %d bytes]", name, MaxFile)
	}
	return text, nil
}

// leftOut tells a file the prompt goes on without (missing: no reason
// logged; a link, a folder, a pipe: the reason) from a failure to stop on.
func leftOut(err error) (bool, string) {
	switch {
	case errors.Is(err, resolve.ErrNotFound):
		return true, ""
	case errors.Is(err, resolve.ErrLink):
		return true, "it is reached through a link, which Link never follows"
	case errors.Is(err, resolve.ErrNotRegular):
		return true, "it is not a regular file (a folder, a pipe or a device)"
	case errors.Is(err, resolve.ErrNotDir):
		return true, "a folder on its way is not a folder"
	case errors.Is(err, resolve.ErrEscape):
		return true, "it leads outside the agent's folder"
	case errors.Is(err, resolve.ErrInvalid):
		return true, "its name is not a valid name"
	}
	return false, ""
}
