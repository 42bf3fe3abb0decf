// Package settings reads Link's settings: ~/.lnk/settings.toml, a file
// of the owner's alone (0600, in ~/.lnk, 0700) where no sandbox reaches,
// read through the resolver from a handle on HOME, never through a link.
// A missing file means the spec's defaults. An unknown key, a wrong type
// or a value out of its bounds is refused, naming the file, line and key.
//
//	ask_wait      = "2m"   # how long a question waits (at most 24h)
//	tool_sessions = 8      # sessions a sandbox's tool bridge keeps at most
//	tool_idle     = "5m"   # a tool session with no call for this long ends
//	tool_starts   = 2      # tool sessions starting at once at most
//
// # Security
//
// Holds nothing. Trusts the owner's file; refuses one that is a link, not
// a regular file, or writable by anyone but its owner.
package settings

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"lnk.dev/lnk/internal/resolve"
)

// File is where the settings live, relative to HOME.
const File = ".lnk/settings.toml"

// MaxFile caps the file's size.
const MaxFile = 64 << 10

// Settings are Link's own settings, with the spec's defaults.
type Settings struct {
	AskWait      time.Duration // ask_wait: a question for a sandbox of no agent waits this long (2 minutes; at most a day)
	ToolSessions int           // tool_sessions (8)
	ToolIdle     time.Duration // tool_idle (5 minutes)
	ToolStarts   int           // tool_starts (2)
}

// Defaults are the spec's.
var Defaults = Settings{AskWait: 2 * time.Minute, ToolSessions: 8, ToolIdle: 5 * time.Minute, ToolStarts: 2}

// ErrSettings marks every refusal of the file.
var ErrSettings = errors.New("Link's settings")

type file struct {
	AskWait      *string `toml:"ask_wait"`
	ToolSessions *int    `toml:"tool_sessions"`
	ToolIdle     *string `toml:"tool_idle"`
	ToolStarts   *int    `toml:"tool_starts"`
}

// Load reads home's settings; a file not there gives Defaults.
func Load(home string) (Settings, error) {
	h, err := resolve.OpenRoot(home)
	if err != nil {
		return Settings{}, fmt.Errorf("%w: opening HOME: %w", ErrSettings, err)
	}
	defer h.Close()
	info, err := h.Stat(File)
	if errors.Is(err, resolve.ErrNotFound) {
		return Defaults, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("%w: ~/%s: %w", ErrSettings, File, err)
	}
	if info.Mode.Perm()&0o022 != 0 {
		return Settings{}, fmt.Errorf("%w: ~/%s is writable by others (mode %v): chmod 600 it", ErrSettings, File, info.Mode.Perm())
	}
	b, _, err := h.ReadFile(File, MaxFile)
	if err != nil {
		return Settings{}, fmt.Errorf("%w: ~/%s: %w", ErrSettings, File, err)
	}
	return Parse(b)
}

// Parse decodes the file's text strictly.
func Parse(b []byte) (Settings, error) {
	var f file
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Settings{}, fmt.Errorf("%w: ~/%s:%d: %s", ErrSettings, File, pe.Position.Line, pe.Message)
		}
		return Settings{}, fmt.Errorf("%w: ~/%s: %w", ErrSettings, File, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Settings{}, fmt.Errorf("%w: ~/%s: unknown key %s (known: ask_wait, tool_sessions, tool_idle, tool_starts)", ErrSettings, File, strings.Join(keys, ", "))
	}
	s := Defaults
	if s.AskWait, err = duration(f.AskWait, "ask_wait", s.AskWait, time.Second, 24*time.Hour); err != nil {
		return Settings{}, err
	}
	if s.ToolIdle, err = duration(f.ToolIdle, "tool_idle", s.ToolIdle, time.Second, 24*time.Hour); err != nil {
		return Settings{}, err
	}
	if s.ToolSessions, err = count(f.ToolSessions, "tool_sessions", s.ToolSessions, 64); err != nil {
		return Settings{}, err
	}
	if s.ToolStarts, err = count(f.ToolStarts, "tool_starts", s.ToolStarts, 16); err != nil {
		return Settings{}, err
	}
	return s, nil
}

func duration(v *string, key string, def, lo, hi time.Duration) (time.Duration, error) {
	if v == nil {
		return def, nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d < lo || d > hi {
		return 0, fmt.Errorf("%w: ~/%s: %s = %q is not a duration from %v to %v", ErrSettings, File, key, *v, lo, hi)
	}
	return d, nil
}

func count(v *int, key string, def, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < 1 || *v > hi {
		return 0, fmt.Errorf("%w: ~/%s: %s = %d is not from 1 to %d", ErrSettings, File, key, *v, hi)
	}
	return *v, nil
}
