package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/secret"
)

// Limits of the file.
const (
	MaxFileSize  = 1 << 20
	MaxValueSize = 64 << 10
	MaxSecrets   = 1024
	MaxAgents    = 256
)

var (
	// Compiled at first use, not at every lnk start: compiling the host
	// pattern is a large part of a start that never reads a secret.
	nameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,127}$`) })
	agentIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })
	hostRE    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
	})
)

// ErrSyntax wraps every refusal of the file's contents.
var ErrSyntax = errors.New("secrets.toml")

// Entry is one secret.
type Entry struct {
	Value        *secret.Value
	InternetHost string // set for a sealed secret
	// Headers are the request headers a sealed secret's value is added
	// to, in canonical form; none means [DefaultHeader].
	Headers []string
	Agents  []string // agent IDs it is granted to, sorted
}

// Sealed reports whether the secret is sealed (added by the proxy for one
// host, never given to an agent as it is).
func (e *Entry) Sealed() bool { return e.InternetHost != "" }

// GrantedTo reports whether agent id holds the secret.
func (e *Entry) GrantedTo(id string) bool {
	for _, a := range e.Agents {
		if a == id {
			return true
		}
	}
	return false
}

// File is the parsed secrets.toml.
type File struct {
	Secrets map[string]*Entry
}

// Destroy zeroes every value.
func (f *File) Destroy() {
	for _, e := range f.Secrets {
		e.Value.Destroy()
	}
}

// Names lists the secrets' names, sorted.
func (f *File) Names() []string {
	out := make([]string, 0, len(f.Secrets))
	for n := range f.Secrets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type rawEntry struct {
	Value        *string  `toml:"value"`
	InternetHost string   `toml:"internet_host"`
	Headers      []string `toml:"headers"`
	Agents       []string `toml:"agents"`
}

// CheckName refuses a name that is not upper-case letters, digits and _.
func CheckName(name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("%w: %q is not a secret's name: upper-case letters, digits and _, starting with a letter, at most 128", ErrSyntax, printable(name))
	}
	return nil
}

// CheckHost refuses a host that is not a lower-case DNS name.
func CheckHost(host string) error {
	if len(host) > 253 || !hostRE().MatchString(host) || !strings.Contains(host, ".") {
		return fmt.Errorf("%w: %q is not an internet host (a lower-case DNS name such as api.example.com)", ErrSyntax, printable(host))
	}
	return nil
}

// CheckAgentID refuses what is not an agent ID (32 lower-case hex digits).
func CheckAgentID(id string) error {
	if !agentIDRE().MatchString(id) {
		return fmt.Errorf("%w: %q is not an agent ID", ErrSyntax, printable(id))
	}
	return nil
}

// Parse reads a secrets file strictly, and zeroes data.
func Parse(data []byte) (*File, error) {
	defer clear(data)
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than 1 MiB", ErrSyntax)
	}
	var raw struct {
		Secrets map[string]rawEntry `toml:"secrets"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrSyntax, syntaxLine(err))
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%w: unknown key %q", ErrSyntax, printable(und[0].String()))
	}
	if len(raw.Secrets) > MaxSecrets {
		return nil, fmt.Errorf("%w: more than %d secrets", ErrSyntax, MaxSecrets)
	}
	f := &File{Secrets: map[string]*Entry{}}
	for name, r := range raw.Secrets {
		e, err := entryOf(name, r)
		if err != nil {
			f.Destroy()
			return nil, err
		}
		f.Secrets[name] = e
	}
	return f, nil
}

func entryOf(name string, r rawEntry) (*Entry, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if r.Value == nil || *r.Value == "" {
		return nil, fmt.Errorf("%w: secret %s has no value", ErrSyntax, name)
	}
	if len(*r.Value) > MaxValueSize {
		return nil, fmt.Errorf("%w: secret %s's value is over 64 KiB", ErrSyntax, name)
	}
	if r.InternetHost != "" {
		if err := CheckHost(r.InternetHost); err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
	}
	headers, err := checkHeaders(r.InternetHost, r.Headers)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	if len(r.Agents) > MaxAgents {
		return nil, fmt.Errorf("%w: secret %s is granted to more than %d agents", ErrSyntax, name, MaxAgents)
	}
	seen := map[string]bool{}
	for _, a := range r.Agents {
		if err := CheckAgentID(a); err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		if seen[a] {
			return nil, fmt.Errorf("%w: secret %s names agent %s twice", ErrSyntax, name, a)
		}
		seen[a] = true
	}
	v, err := secret.FromString(*r.Value)
	if err != nil {
		return nil, err
	}
	agents := append([]string(nil), r.Agents...)
	sort.Strings(agents)
	return &Entry{Value: v, InternetHost: r.InternetHost, Headers: headers, Agents: agents}, nil
}

// Encode writes the file. The caller zeroes what it returns.
func (f *File) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("# Link's secrets (lnk secret create|add|remove|list). Mode 600; no sandbox ever reaches it.\n")
	for _, name := range f.Names() {
		e := f.Secrets[name]
		fmt.Fprintf(&b, "\n[secrets.%s]\nvalue = ", name)
		writeBasicString(&b, e.Value.Bytes())
		runtime.KeepAlive(e.Value)
		b.WriteByte('\n')
		if e.InternetHost != "" {
			fmt.Fprintf(&b, "internet_host = %q\n", e.InternetHost)
		}
		if len(e.Headers) > 0 {
			b.WriteString("headers = [")
			for i, h := range e.Headers {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q", h)
			}
			b.WriteString("]\n")
		}
		b.WriteString("agents = [")
		for i, a := range e.Agents {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", a)
		}
		b.WriteString("]\n")
	}
	out := bytes.Clone(b.Bytes())
	clear(b.Bytes()[:cap(b.Bytes())])
	return out
}

// writeBasicString writes v as a TOML basic string without passing it
// through fmt or strconv (which would leave copies).
func writeBasicString(b *bytes.Buffer, v []byte) {
	const hexDigits = "0123456789ABCDEF"
	b.WriteByte('"')
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// syntaxLine says where the file is wrong and never what is there: a
// decoder's message can quote the text, which may be a value.
func syntaxLine(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d is not valid TOML", pe.Position.Line)
	}
	return "a key has a value of the wrong type"
}

func printable(s string) string { return sealedgrant.Printable(s) }
