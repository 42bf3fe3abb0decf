package webhook

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// SettingsName is the webhooks' record in the agent's settings folder.
const SettingsName = "webhooks.json"

// Limits of the record.
const (
	maxSettings = 1 << 20
	MaxHooks    = 256
)

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// Errors a caller tells apart with errors.Is.
var (
	ErrBadName = errors.New("a webhook's name is a lower-case letter, then up to 31 lower-case letters, digits or '-'")
	ErrExists  = errors.New("the agent has a webhook of that name")
	ErrNoHook  = errors.New("the agent has no webhook of that name")
	ErrTooMany = fmt.Errorf("an agent has at most %d webhooks", MaxHooks)
)

// Hook is one webhook's record. Its secrets are in secrets.toml.
type Hook struct {
	Name    string    `json:"name"`
	ID      string    `json:"id"` // 32 hex digits: 128 random bits
	Created time.Time `json:"created"`
	// PreviousUntil is set while a rolled secret is still taken.
	PreviousUntil *time.Time `json:"previous_until,omitempty"`
}

// Settings is webhooks.json.
type Settings struct {
	Port  int    `json:"port"` // the listener's port on 127.0.0.1
	Hooks []Hook `json:"hooks"`
}

// Find returns the hook with name, or nil.
func (s *Settings) Find(name string) *Hook {
	for i := range s.Hooks {
		if s.Hooks[i].Name == name {
			return &s.Hooks[i]
		}
	}
	return nil
}

// ByID returns the hook with id, or nil.
func (s *Settings) ByID(id string) *Hook {
	for i := range s.Hooks {
		if s.Hooks[i].ID == id {
			return &s.Hooks[i]
		}
	}
	return nil
}

// CheckName refuses a webhook name that is not Link's form.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return nil
}

// CheckID refuses an id that is not 32 lower-case hex digits.
func CheckID(id string) error {
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return errors.New("a webhook id is 32 lower-case hex digits")
	}
	return nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Agent is the agent a webhook belongs to, with its settings folder.
type Agent struct {
	Home  string
	Name  string
	ID    string
	Owner string
}

// LoadAgent finds agent name under home.
func LoadAgent(home, name string) (Agent, error) {
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return Agent{}, err
	}
	return Agent{Home: home, Name: a.Name, ID: a.ID, Owner: a.Owner}, nil
}

// dir opens ~/.lnk/agents/<agent id>, made 0700 where missing.
func (a Agent) dir() (*os.File, error) {
	return ownerdir.Open(a.Home, ".lnk", "agents", a.ID)
}

// Load reads the agent's webhooks.json; a missing one is no webhooks.
func (a Agent) Load() (*Settings, error) {
	d, err := a.dir()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return readSettings(int(d.Fd()))
}

func readSettings(dirfd int) (*Settings, error) {
	data, err := ownerfile.ReadFile(dirfd, SettingsName, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}, maxSettings)
	if errors.Is(err, unix.ENOENT) {
		return &Settings{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", SettingsName, err)
	}
	return parseSettings(data)
}

// parseSettings parses webhooks.json's bytes, refusing a malformed hook.
func parseSettings(data []byte) (*Settings, error) {
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", SettingsName, err)
	}
	for _, h := range s.Hooks {
		if CheckName(h.Name) != nil || CheckID(h.ID) != nil {
			return nil, fmt.Errorf("%s: a malformed webhook record", SettingsName)
		}
	}
	return &s, nil
}

// update runs change on the record under ~/.lnk/agents/<id>/.webhooks.lock
// and writes it whole (600) when change succeeds.
func (a Agent) update(change func(*Settings) error) error {
	d, err := a.dir()
	if err != nil {
		return err
	}
	defer d.Close()
	lfd, err := ownerfile.Open(int(d.Fd()), ".webhooks.lock", unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return err
	}
	defer unix.Close(lfd)
	if err := unix.Flock(lfd, unix.LOCK_EX); err != nil {
		return err
	}
	s, err := readSettings(int(d.Fd()))
	if err != nil {
		return err
	}
	if err := change(s); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return ownerfile.WriteAtomic(int(d.Fd()), SettingsName, append(data, '\n'), ownerfile.Write{Mode: 0o600})
}
