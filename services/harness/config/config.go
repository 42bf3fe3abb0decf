package config

import "errors"

// File is config.json's name in the harness's home; MaxSize the largest
// read.
const (
	File    = "config.json"
	MaxSize = 1 << 20
	// KeySize is the endpoint key's length in bytes (hex in the file).
	KeySize = 32
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
	Storage  Storage           `json:"storage"`
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
	Conversations string `json:"conversations,omitempty"` // "" or "compact"
}

// ErrNoKey is Key's error for a config that names no key.
var ErrNoKey = errors.New("config.json names no endpoint key")

var errNotBuilt = errors.New("config: not built yet")

// Parse reads config.json's bytes strictly.
func Parse(data []byte) (*Config, error) { return nil, errNotBuilt }

// Read reads config.json from the folder dirfd: never through a link,
// never a fifo, at most MaxSize bytes, the owner's and 0600.
func Read(dirfd int) (*Config, error) { return nil, errNotBuilt }

// ReadPath is Read for the file at path.
func ReadPath(path string) (*Config, error) { return nil, errNotBuilt }

// Write writes c as config.json in the folder dirfd, atomically, 0600.
func Write(dirfd int, c *Config) error { return errNotBuilt }

// NewKey is a fresh endpoint key: KeySize random bytes in hex.
func NewKey() string { return "" }

// KeyBytes is the key's bytes; ErrNoKey when there is none.
func (c *Config) KeyBytes() ([]byte, error) { return nil, errNotBuilt }
