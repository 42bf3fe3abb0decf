package caps

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"lnk.dev/lnk/internal/refusal"
)

// MaxSpecSize is the largest spec file read: a sandbox spec is a few
// lines; anything bigger is refused before it is parsed.
const MaxSpecSize = 256 << 10

// Spec is one layer of grants as written in a sandbox spec file: the
// agent's Config/sandbox.toml or a harness's ~/.lnk/harnesses/<h>.toml.
// A nil table means the file does not say it (the agent layer's default
// then holds); an empty list means none.
type Spec struct {
	Files     *FilesSpec           `toml:"files,omitempty"`
	Internet  *InternetSpec        `toml:"internet,omitempty"`
	Commands  *CommandsSpec        `toml:"commands,omitempty"`
	Localhost *LocalhostSpec       `toml:"localhost,omitempty"`
	LAN       *HostsSpec           `toml:"lan,omitempty"`
	Network   *NetworkSpec         `toml:"network,omitempty"`
	Browser   *HostsSpec           `toml:"browser,omitempty"`
	Tools     *ToolsSpec           `toml:"tools,omitempty"`
	Teams     map[string]TeamGrant `toml:"teams,omitempty"`
	Model     *ModelSpec           `toml:"model,omitempty"`
	Tool      *ToolLimitsSpec      `toml:"tool,omitempty"`
	Run       *RunSpec             `toml:"run,omitempty"`
}

// FilesSpec is [files]: folders read, and folders written. ReadOnly are
// the .git, .envrc, .vscode and .idea that lnk agent allow --write found
// below the top of a written folder (nested.go); WriteGit are written
// folders whose nested ones the owner lets the sandbox write
// (--write-git), which are not scanned.
type FilesSpec struct {
	Read     []string `toml:"read,omitempty"`
	Write    []string `toml:"write"`
	ReadOnly []string `toml:"read_only,omitempty"`
	WriteGit []string `toml:"write_git,omitempty"`
}

// InternetSpec is [internet].
type InternetSpec struct {
	On        *bool    `toml:"on,omitempty"`
	Hosts     []string `toml:"hosts,omitempty"`
	PerMinute int      `toml:"per_minute,omitzero"`
	TCP       []string `toml:"tcp,omitempty"`
}

// CommandsSpec is [commands]: the programs that may start.
type CommandsSpec struct {
	Allow []string `toml:"allow"`
}

// LocalhostSpec is [localhost]: ports, each a number or "*".
type LocalhostSpec struct {
	Ports []Port `toml:"ports"`
}

// Port is a [localhost] port as written: a number, or the string "*".
// Compile checks its range.
type Port string

// UnmarshalTOML takes an integer or a string.
func (p *Port) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		*p = Port(strconv.FormatInt(x, 10))
	case string:
		*p = Port(x)
	default:
		return fmt.Errorf(`wrong type: a port is a number or "*", not %T`, v)
	}
	return nil
}

// MarshalTOML writes a number as a number, anything else as a string.
func (p Port) MarshalTOML() ([]byte, error) {
	if n, err := strconv.ParseUint(string(p), 10, 16); err == nil && strconv.FormatUint(n, 10) == string(p) {
		return []byte(string(p)), nil
	}
	return []byte(strconv.Quote(string(p))), nil
}

// HostsSpec is [lan] and [browser]: host names.
type HostsSpec struct {
	Hosts []string `toml:"hosts"`
}

// NetworkSpec is [network]: mode "host" or empty.
type NetworkSpec struct {
	Mode string `toml:"mode,omitempty"`
}

// ToolsSpec is [tools]: outside tools by name ([tools.<name>]) and the
// tools a stranger's message gets.
type ToolsSpec struct {
	Strangers []string            `toml:"strangers,omitempty"`
	Grant     map[string]ToolSpec `toml:"grant,omitempty"`
}

// ToolSpec is [tools.grant.<name>]: calls that go through without asking,
// or ask = "none".
type ToolSpec struct {
	Allow []string `toml:"allow,omitempty"`
	Ask   string   `toml:"ask,omitempty"`
}

// ModelSpec is [model].
type ModelSpec struct {
	Allow []string `toml:"allow"`
}

// ToolLimitsSpec is [tool.run], [tool.memory], [tool.scheduler].
type ToolLimitsSpec struct {
	Run       *RunLimitsSpec       `toml:"run,omitempty"`
	Memory    *MemoryLimitsSpec    `toml:"memory,omitempty"`
	Scheduler *SchedulerLimitsSpec `toml:"scheduler,omitempty"`
}

// RunLimitsSpec is [tool.run]; durations as "90s", "2m", sizes in bytes.
type RunLimitsSpec struct {
	Timeout           string `toml:"timeout,omitempty"`
	Output            int64  `toml:"output,omitzero"`
	BackgroundTimeout string `toml:"background_timeout,omitempty"`
	Background        int    `toml:"background,omitzero"`
	BackgroundOutput  int64  `toml:"background_output,omitzero"`
	BackgroundPerDay  int    `toml:"background_per_day,omitzero"`
	BackgroundKeep    string `toml:"background_keep,omitempty"`
}

// MemoryLimitsSpec is [tool.memory].
type MemoryLimitsSpec struct {
	Notes int64 `toml:"notes,omitzero"`
}

// SchedulerLimitsSpec is [tool.scheduler].
type SchedulerLimitsSpec struct {
	Hops      int `toml:"hops,omitzero"`
	PerDay    int `toml:"per_day,omitzero"`
	Subagents int `toml:"subagents,omitzero"`
}

// RunSpec is [run].
type RunSpec struct {
	IdleAfter string `toml:"idle_after,omitempty"`
}

// SpecError is a spec file refused as written: it names the file, the
// line (0 when unknown) and the key. Rule tells which: "spec-syntax",
// "spec-unknown-key", "spec-wrong-type" or "spec-too-big".
type SpecError struct {
	File, Key, Why string
	Line           int
	rule           string
}

func (e *SpecError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: key %s: %s", loc, e.Key, e.Why)
	}
	return fmt.Sprintf("%s: %s", loc, e.Why)
}

// Rule names the refusal.
func (e *SpecError) Rule() string { return e.rule }

// Is lets errors.Is(err, ErrSpecUnknownKey) and the like tell the kind.
func (e *SpecError) Is(target error) bool {
	return refusal.Matches(target, e.rule)
}

// typeErrRE is compiled at first use, not at every lnk start.
var typeErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+) \(last key "([^"]*)"\): (.*)$`) })

// ParseSpec decodes one spec file's bytes strictly: a syntax error, an
// unknown key or a wrong type is refused naming file, line and key. It
// checks nothing about paths; Compile does.
func ParseSpec(file string, data []byte) (*Spec, error) {
	if len(data) > MaxSpecSize {
		return nil, &SpecError{File: file, Why: fmt.Sprintf("larger than %d bytes", MaxSpecSize), rule: "spec-too-big"}
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, &SpecError{File: file, Why: "not UTF-8 text", rule: "spec-syntax"}
	}
	var s Spec
	md, err := toml.Decode(string(data), &s)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			rule := "spec-syntax"
			if strings.HasPrefix(pe.Message, "wrong type") {
				rule = "spec-wrong-type"
			}
			return nil, &SpecError{File: file, Line: pe.Position.Line, Key: pe.LastKey, Why: oneLine(pe.Message), rule: rule}
		}
		msg := oneLine(err.Error())
		if m := typeErrRE().FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &SpecError{File: file, Line: line, Key: m[2], Why: "wrong type: " + m[3], rule: "spec-wrong-type"}
		}
		return nil, &SpecError{File: file, Why: strings.TrimPrefix(msg, "toml: "), rule: "spec-wrong-type"}
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, &SpecError{File: file, Line: keyLine(data, k), Key: k.String(), Why: "unknown key", rule: "spec-unknown-key"}
	}
	return &s, nil
}

// oneLine keeps the first line of msg.
func oneLine(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	return strings.TrimSpace(msg)
}

// keyLine finds the line that defines key k in data: its table header, or
// its "name =" line under the table that holds it. 0 when not found.
func keyLine(data []byte, k toml.Key) int {
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			h := strings.Trim(l, "[] \t")
			h, _, _ = strings.Cut(h, "]")
			table = strings.ReplaceAll(h, " ", "")
			if table == k.String() {
				return i + 1
			}
			continue
		}
		name, _, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		full := strings.Trim(strings.TrimSpace(name), `"'`)
		if table != "" {
			full = table + "." + full
		}
		if full == k.String() || strings.HasPrefix(k.String(), full+".") {
			return i + 1
		}
	}
	return 0
}
