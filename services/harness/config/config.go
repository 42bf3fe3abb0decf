package config

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/toolname"
)

// File is config.json's name in the harness's home; MaxSize the largest
// read.
const (
	File    = "config.json"
	MaxSize = 1 << 20
	// KeySize is the endpoint key's length in bytes (hex in the file).
	KeySize = 32
	// Home is Link Harness's name among the agent's Harnesses.
	Home = "link"
)

// Config is config.json.
type Config struct {
	AgentID  string            `json:"agent_id"`
	Owner    string            `json:"owner"`
	Name     string            `json:"name"`
	Key      string            `json:"key,omitempty"` // 64 hex digits; "" refuses every request (503)
	Port     int               `json:"port"`
	AgentDir string            `json:"agent_dir"` // the agent's Agent/ folder, as the sandbox binds it
	Model    Model             `json:"model"`
	Fallback *Model            `json:"fallback,omitempty"`
	Tools    map[string]string `json:"tools,omitempty"` // tool name → the $LNK_TOOL_ variable with its route
	// Strangers are the tools, of Tools, a stranger's turn gets ([tools]
	// strangers); none when empty. Never run or the scheduler.
	Strangers []string `json:"strangers,omitempty"`
	// Models are [model] allow: the models beside its own a subagent may
	// run on (caps.SubagentModelAllowed).
	Models  []string `json:"models,omitempty"`
	Storage Storage  `json:"storage"`
}

// Model is a model's endpoint as the harness reaches it.
type Model struct {
	Format  string `json:"format"`   // "openai" or "anthropic"
	BaseURL string `json:"base_url"` // http://… as the proxy takes it
	Model   string `json:"model"`
	Key     string `json:"key,omitempty"` // a placeholder behind the proxy
}

// Storage is [storage].
type Storage struct {
	Conversations string `json:"conversations,omitempty"` // "" (events.jsonl) or "compact"
}

// ErrNoKey is KeyBytes' error for a config that names no key.
var ErrNoKey = errors.New("config.json names no endpoint key: every request is refused (503) until lnk agent start writes one")

// ErrBad wraps every refusal of a config.json's content.
var ErrBad = errors.New("config.json refused")

var (
	toolVar = regexp.MustCompile(`^LNK_TOOL_[A-Z0-9_]{1,64}$`)
)

// Parse reads config.json's bytes strictly: one JSON object, no unknown,
// repeated or differently-cased field, each value checked (Check).
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBad, MaxSize)
	}
	seen := map[string]bool{}
	var dup string
	if err := jsonscan.Members(bytes.TrimSpace(data), func(k string, _ jsonscan.Span) {
		if seen[strings.ToLower(k)] && dup == "" {
			dup = k
		}
		seen[strings.ToLower(k)] = true
	}); err != nil {
		return nil, fmt.Errorf("%w: not one JSON object", ErrBad)
	}
	if dup != "" {
		return nil, fmt.Errorf("%w: field %q given twice", ErrBad, dup)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var c Config
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBad, err)
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Check refuses a config Link Harness can't run with, saying why.
func (c *Config) Check() error {
	bad := func(f string, a ...any) error { return fmt.Errorf("%w: "+f, append([]any{ErrBad}, a...)...) }
	switch {
	case !isID(c.AgentID):
		return bad("agent_id %q is not an agent's ID (32 hex digits)", c.AgentID)
	case c.Owner == "" || len(c.Owner) > 256 || strings.ContainsFunc(c.Owner, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("owner is empty, longer than 256 bytes or holds a control character")
	case caps.CheckName(c.Name) != nil:
		return bad("name %q is not an agent's name", c.Name)
	case c.Key != "" && !isHex(c.Key, 2*KeySize):
		return bad("key is not %d bytes in hex", KeySize)
	case c.Port < caps.MinPort || c.Port > caps.MaxPort:
		return bad("port %d is not within %d-%d", c.Port, caps.MinPort, caps.MaxPort)
	case !filepath.IsAbs(c.AgentDir) || filepath.Clean(c.AgentDir) != c.AgentDir:
		return bad("agent_dir %q is not a clean absolute path", c.AgentDir)
	case c.Storage.Conversations != "" && c.Storage.Conversations != "compact":
		return bad("storage conversations = %q: Link Harness keeps them plain (\"\") or \"compact\"", c.Storage.Conversations)
	}
	if err := c.Model.check("model"); err != nil {
		return err
	}
	if c.Fallback != nil {
		if err := c.Fallback.check("fallback"); err != nil {
			return err
		}
	}
	for name, v := range c.Tools {
		if err := toolname.CheckTool(name); err != nil {
			return bad("tools: %v", err)
		}
		if !toolVar.MatchString(v) {
			return bad("tool %q → %q: a LNK_TOOL_ variable is LNK_TOOL_ and 1 to 64 of A-Z, 0-9 and _", name, v)
		}
	}
	for _, m := range c.Models {
		if err := toolname.CheckModel(m); err != nil {
			return bad("models: %v", err)
		}
	}
	for _, name := range c.Strangers {
		lower := strings.ToLower(name)
		for _, p := range []string{"run", "scheduler"} {
			if lower == p || strings.HasPrefix(lower, p+"-") {
				return bad("strangers names %q: a stranger's message never gets run or the scheduler, through which the agent acts as itself", name)
			}
		}
		if _, ok := c.Tools[name]; !ok {
			return bad("strangers names %q, which is not one of the agent's tools", name)
		}
	}
	return nil
}

func (m *Model) check(what string) error {
	switch m.Format {
	case "openai", "anthropic":
	default:
		return fmt.Errorf("%w: %s format %q: Link Harness speaks \"openai\" or \"anthropic\"", ErrBad, what, m.Format)
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: %s base_url %q is not an http(s) URL without user, query or fragment", ErrBad, what, m.BaseURL)
	}
	if err := toolname.CheckModel(m.Model); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBad, what, err)
	}
	if len(m.Key) > 4096 || strings.ContainsAny(m.Key, "\r\n\x00") {
		return fmt.Errorf("%w: %s key is too long or holds a line break", ErrBad, what)
	}
	return nil
}

// Read reads config.json from the folder dirfd: never through a link,
// never a fifo, at most MaxSize bytes, the owner's and 0600 (a file
// others may read is refused: it holds the endpoint's key).
func Read(dirfd int) (*Config, error) {
	data, err := ownerfile.ReadFile(dirfd, File, ownerfile.Private, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBad, err)
	}
	return Parse(data)
}

// ReadPath is Read for the file at path (absolute), reached through no
// link.
func ReadPath(path string) (*Config, error) {
	if filepath.Base(path) != File {
		return nil, fmt.Errorf("%w: %s is not a %s", ErrBad, path, File)
	}
	fd, err := ownerfile.OpenPath(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("%w: opening %s: %v", ErrBad, filepath.Dir(path), err)
	}
	defer unix.Close(fd)
	return Read(fd)
}

// Write writes c, once checked, as config.json in the folder dirfd,
// atomically, 0600.
func Write(dirfd int, c *Config) error {
	if err := c.Check(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return ownerfile.WriteAtomic(dirfd, File, append(data, '\n'), ownerfile.Write{Mode: 0o600})
}

// NewKey is a fresh endpoint key: KeySize random bytes in hex.
func NewKey() string {
	var b [KeySize]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather)
	return hex.EncodeToString(b[:])
}

// KeyBytes is the key's bytes; ErrNoKey when there is none.
func (c *Config) KeyBytes() ([]byte, error) {
	if c.Key == "" {
		return nil, ErrNoKey
	}
	return hex.DecodeString(c.Key)
}

func isID(s string) bool { return isHex(s, 32) }

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
