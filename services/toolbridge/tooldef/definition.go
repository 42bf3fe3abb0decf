package tooldef

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"lnk.dev/lnk/internal/secret"
)

// Snapshot is the list of the owner's variables a tool runs with, taken
// when it was added, and no more (tools-and-asking.txt "What it runs
// with"): PATH, HOME, the user, the locale, TMPDIR, the SSH agent and the
// desktop session.
var Snapshot = []string{
	"PATH", "HOME", "USER", "LOGNAME",
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC", "LC_TIME",
	"TMPDIR", "SSH_AUTH_SOCK",
	"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR",
}

// Definition is one tool as Link runs it.
type Definition struct {
	Name    string
	Command []string // argv; Command[0] absolute or a name looked up on the snapshot's PATH
	URL     string   // for a tool at a URL: Command is Link's own remote client
	// Env is the tool's whole environment: the snapshot, then --env values
	// and a URL tool's headers (LNK_MCP_HEADER_<n>). Every value is a secret.
	Env map[string]*secret.Value
	// Shared runs one server for every session of every sandbox naming
	// the tool, under one hub (tools-and-asking.txt "A shared tool"):
	// sessions share that server and whatever it keeps between calls.
	Shared bool
}

// Destroy zeroes every value the definition holds.
func (d *Definition) Destroy() {
	for _, v := range d.Env {
		v.Destroy()
	}
}

// Environ is the tool's environment as exec wants it, sorted. The
// strings hold the values: the caller hands them to exec and drops them.
func (d *Definition) Environ() []string {
	keys := d.envKeys()
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+string(d.Env[k].Bytes()))
	}
	return env
}

func (d *Definition) envKeys() []string {
	keys := make([]string, 0, len(d.Env))
	for k := range d.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Digest names what the tool runs as: its command, URL and every value of
// its environment. A tool added again with another digest ends the
// sessions started before (tools-and-asking.txt "A tool added again").
// It is a hash, and shows no value.
func (d *Definition) Digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "url\x00%s\x00", d.URL)
	if d.Shared {
		h.Write([]byte("shared\x00"))
	}
	for _, a := range d.Command {
		fmt.Fprintf(h, "arg\x00%d\x00%s", len(a), a)
	}
	for _, k := range d.envKeys() {
		fmt.Fprintf(h, "env\x00%s\x00%d\x00", k, d.Env[k].Len())
		h.Write(d.Env[k].Bytes())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Errors a caller tells apart.
var (
	ErrName     = errors.New("not a tool name")
	ErrRelative = errors.New("an argument written from the folder the tool was added in")
	ErrURL      = errors.New("not a URL a tool may be reached at")
	ErrEnv      = errors.New("not an environment variable")
	ErrField    = errors.New("not a field of a tool's definition")
	ErrNotFound = errors.New("no such tool")
)

// reserved are names of Link's own namespaces and tools, which an added
// tool can never take.
var reserved = []string{"task", "tool", "file", "agent", "memory", "scheduler", "run", "link"}

// CheckName refuses a name that is not letters, digits, - and _, that is
// one of Link's own (task, tool, file, agent; memory-…, scheduler-…,
// run-…, file-…), that holds "--" or ends with "-" (such a tool would
// never be offered), or is longer than 64.
func CheckName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w: %q is empty or longer than 64 characters", ErrName, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%w: %q holds %q; a tool's name is letters, digits, - and _", ErrName, name, r)
		}
	}
	if strings.Contains(name, "--") || strings.HasSuffix(name, "-") || strings.HasPrefix(name, "-") {
		return fmt.Errorf("%w: %q holds --, or starts or ends with -, and would never be offered", ErrName, name)
	}
	lower := strings.ToLower(name)
	for _, r := range reserved {
		if lower == r || strings.HasPrefix(lower, r+"-") {
			return fmt.Errorf("%w: %q is Link's own (%s, and %s-…, are never an added tool's)", ErrName, name, r, r)
		}
	}
	return nil
}

// CheckCommand refuses an empty command, a NUL, and any argument written
// from the folder the tool was added in: ".", "..", "./…", "../…", and a
// program named by a relative path with a slash. The tool runs in /.
func CheckCommand(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return fmt.Errorf("%w: no command given", ErrRelative)
	}
	for i, a := range argv {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %d holds a NUL byte", i)
		}
		if a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
			return fmt.Errorf("%w: %q (the tool runs in /; give the absolute path)", ErrRelative, a)
		}
	}
	if strings.Contains(argv[0], "/") && !strings.HasPrefix(argv[0], "/") {
		return fmt.Errorf("%w: program %q (the tool runs in /; give the absolute path)", ErrRelative, argv[0])
	}
	return nil
}

// CheckEnvName refuses a variable name that is not [A-Za-z_][A-Za-z0-9_]*.
func CheckEnvName(k string) error {
	if k == "" {
		return fmt.Errorf("%w: empty name", ErrEnv)
	}
	for i, r := range k {
		ok := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return fmt.Errorf("%w: %q", ErrEnv, k)
		}
	}
	return nil
}

// TakeSnapshot reads the snapshot variables from this process's
// environment, as they are when the tool is added.
func TakeSnapshot() (map[string]*secret.Value, error) {
	env := map[string]*secret.Value{}
	for _, k := range Snapshot {
		v, ok := os.LookupEnv(k)
		if !ok || v == "" {
			continue
		}
		s, err := secret.FromString(v)
		if err != nil {
			return nil, err
		}
		env[k] = s
	}
	return env, nil
}
