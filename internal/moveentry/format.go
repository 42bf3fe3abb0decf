package moveentry

import (
	"errors"
	"fmt"
	"strings"
)

// Magic opens a move's plaintext: the format and its version.
// v2: the switch's settings carry a fourth blob, the sealed rclone.conf.
const Magic = "lnk-move/v2\n"

// Limits of the format.
const (
	MaxDepth    = 32      // folders under an area
	MaxPath     = 4096    // bytes of a path or a link's target
	MaxName     = 255     // bytes of one name in a path
	MaxEntries  = 4 << 20 // entries in one stream
	MaxHead     = 4 << 10 // bytes of the head's JSON
	MaxSettings = 1 << 20 // bytes of each settings blob
	MaxFileSize = 1 << 40 // bytes of one file
)

// Kind is what an entry is.
type Kind byte

// The kinds of entry.
const (
	KindHead     Kind = 'h'
	KindPhase    Kind = 'p'
	KindSettings Kind = 's'
	KindDir      Kind = 'd'
	KindFile     Kind = 'f'
	KindLink     Kind = 'l'
	KindEnd      Kind = 'e'
)

// Phase is a part of a move.
type Phase byte

// The phases, in the order a stream carries them.
const (
	PhaseNone   Phase = 0
	PhaseCopy   Phase = 'c' // the preliminary copy: the files folder and memory's index
	PhaseSwitch Phase = 's' // the switch: settings, then the harness's state
)

// Areas are the top names a phase's paths may start with.
var Areas = map[Phase][]string{
	PhaseCopy:   {"files", "memory"},
	PhaseSwitch: {"chats", "instructions", "skills", "home"},
}

// The refusals.
var (
	ErrFormat = errors.New("move: not a move stream of this format (lnk-move/v2): sent by an older or newer lnk")
	ErrEntry  = errors.New("move: an entry of a kind this format has not")
	ErrPath   = errors.New("move: an entry's path leaves its folder")
	ErrDepth  = errors.New("move: a folder more than 32 deep")
	ErrHash   = errors.New("move: a file's bytes do not match its SHA-256")
	ErrOrder  = errors.New("move: entries out of order")
	ErrEnd    = errors.New("move: the stream's end is missing, wrong, or followed by more")
	ErrSize   = errors.New("move: a length past the format's limit")
)

// Head says which agent a stream carries.
type Head struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Harness string `json:"harness,omitempty"`
}

// Settings are Link's settings for the agent: its agent.toml and
// sandbox.toml as the leaving machine had them, and its secrets and its
// buckets' rclone.conf (keys and the obscured crypt password), each
// sealed apart to the same receiver. An empty blob is none.
type Settings struct {
	Agent   []byte
	Sandbox []byte
	Secrets []byte
	Buckets []byte
}

// Entry is one entry read.
type Entry struct {
	Kind     Kind
	Phase    Phase  // the phase it came in
	Path     string // folders, files and links: area/rel
	Mode     uint32 // permission bits only
	Size     int64  // a file's
	Target   string // a link's
	Head     *Head
	Settings *Settings
}

// CheckPath refuses a path that is not a plain relative path under one of
// phase's areas, or an entry of kind k whose folders lie more than
// MaxDepth deep under its area. It returns the path's names.
func CheckPath(phase Phase, k Kind, p string) ([]string, error) {
	if p == "" || len(p) > MaxPath || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return nil, pathErr(p)
	}
	names := strings.Split(p, "/")
	for _, n := range names {
		if n == "" || n == "." || n == ".." || len(n) > MaxName {
			return nil, pathErr(p)
		}
	}
	ok := false
	for _, a := range Areas[phase] {
		ok = ok || names[0] == a
	}
	if !ok {
		return nil, pathErr(p)
	}
	depth := len(names) - 1 // a folder's own depth under its area
	if k != KindDir {
		depth-- // the folders a file or link lies in
	}
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: %s", ErrDepth, quote(p))
	}
	return names, nil
}

func pathErr(p string) error {
	return &PathError{Path: p}
}

// PathError names the path refused.
type PathError struct{ Path string }

func (e *PathError) Error() string { return ErrPath.Error() + ": " + quote(e.Path) }
func (e *PathError) Unwrap() error { return ErrPath }

// quote shows a stream's path on one line, without control characters.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			b.WriteString("?")
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
