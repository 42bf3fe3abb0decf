package initstage

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// MaxPlan is the largest plan read: a plan is a few KiB.
const MaxPlan = 1 << 20

// Plan is what lnk-init enforces before it execs the command.
type Plan struct {
	// Path is the program exec'd, an absolute path inside the sandbox;
	// Argv its arguments, Argv[0] as the owner typed it.
	Path string
	Argv []string
	// Paths are the landlock rules: each path inside the sandbox and what
	// may be done beneath it.
	Paths []PathRule
	// ConnectTCP are the TCP ports the command may connect to (the relay's
	// and the granted localhost ports); BindTCP those it may bind.
	ConnectTCP []uint16
	BindTCP    []uint16
	// AnyTCP leaves TCP unrestricted ([network] mode "host").
	AnyTCP bool
	// Relay, when set, is the proxy's listener on 127.0.0.1:Port, handed
	// to the proxy on the channel lnk-init is given (--relay-fd).
	Relay *Relay
	// NoExec are mount points remounted noexec before the command runs:
	// what the sandbox may write, and the granted folders without the
	// execute right, so no file there is mapped executable (ld.so FILE)
	// any more than exec'd. Each must be a mount's root.
	NoExec []string
	// MaxProcs bounds the sandbox's processes (threads count): 0, none.
	// ProcsBy says how: ProcsPidMax (the pid namespace's own pid_max)
	// or ProcsRlimit (RLIMIT_NPROC, counted in the sandbox's own user
	// namespace).
	MaxProcs int
	ProcsBy  string
	// Degraded lets the command run where landlock or seccomp is missing.
	Degraded bool
}

// How Plan.MaxProcs is held.
const (
	ProcsPidMax = "pidmax"
	ProcsRlimit = "rlimit"
)

// PathRule grants rights beneath one path inside the sandbox.
type PathRule struct {
	Path     string
	Read     bool
	Write    bool
	Exec     bool
	Optional bool // skipped when absent
}

// Relay is the port of the proxy's listener inside the sandbox.
type Relay struct {
	Port uint16
}

// maxProcs is the largest process bound a plan may ask: a pid
// namespace's pid_max can be no larger (PID_MAX_LIMIT).
const maxProcs = 1 << 22

// ErrBadPlan is a plan that does not parse or breaks a plan rule.
var ErrBadPlan = errors.New("bad sandbox plan")

// The plan's encoding: a header, then fields, each a name and its
// values, every one ended by a NUL (which no path or argument can hold).
// Read without reflection: lnk-init parses it on the path of every
// sandboxed start, where encoding/json cost it more than the rest of its
// work but the seccomp load. Strict: an unknown or repeated field, a
// missing value or a stray byte refuses the plan.
//
//	lnk-plan 1
//	path <Path>          the program exec'd
//	arg <a>              each of Argv, in order
//	rule <rwxo> <path>   a PathRule: a subset of "rwxo" (read, write,
//	                     exec, optional), in that order, then its path
//	connect <port>       each of ConnectTCP
//	bind <port>          each of BindTCP
//	anytcp               AnyTCP
//	relay <port>         Relay
//	noexec <path>        each of NoExec
//	procs <how> <n>      ProcsBy and MaxProcs
//	degraded             Degraded
const planHeader = "lnk-plan 1"

// ParsePlan decodes and checks a plan.
func ParsePlan(b []byte) (*Plan, error) {
	if len(b) > MaxPlan {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrBadPlan, len(b), MaxPlan)
	}
	p, err := decodePlan(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPlan, err)
	}
	if p.Path == "" && len(p.Argv) > 0 {
		p.Path = p.Argv[0]
	}
	if len(p.Argv) == 0 || !filepath.IsAbs(p.Path) {
		return nil, fmt.Errorf("%w: the command must be an absolute path", ErrBadPlan)
	}
	for _, r := range p.Paths {
		if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
			return nil, fmt.Errorf("%w: path %q is not absolute and clean", ErrBadPlan, r.Path)
		}
		if !r.Read && !r.Write && !r.Exec {
			return nil, fmt.Errorf("%w: path %q grants nothing", ErrBadPlan, r.Path)
		}
	}
	for _, m := range p.NoExec {
		if !filepath.IsAbs(m) || filepath.Clean(m) != m {
			return nil, fmt.Errorf("%w: noexec path %q is not absolute and clean", ErrBadPlan, m)
		}
	}
	if p.Relay != nil && p.Relay.Port == 0 {
		return nil, fmt.Errorf("%w: the relay needs a port", ErrBadPlan)
	}
	return p, nil
}

// Encode is the plan as lnk-init reads it. It fails on a string holding a
// NUL, which the encoding cannot carry (no path or argument can hold one).
func (p *Plan) Encode() ([]byte, error) {
	n := len(planHeader) + len(p.Path) + 32
	for _, a := range p.Argv {
		n += len(a) + 5
	}
	for _, r := range p.Paths {
		n += len(r.Path) + 11
	}
	for _, m := range p.NoExec {
		n += len(m) + 8
	}
	b := make([]byte, 0, n)
	field := func(vs ...string) {
		for _, v := range vs {
			b = append(append(b, v...), 0)
		}
	}
	field(planHeader)
	if p.Path != "" {
		field("path", p.Path)
	}
	for _, a := range p.Argv {
		field("arg", a)
	}
	for _, r := range p.Paths {
		var fl [4]byte
		f := fl[:0]
		for i, on := range [4]bool{r.Read, r.Write, r.Exec, r.Optional} {
			if on {
				f = append(f, "rwxo"[i])
			}
		}
		field("rule", string(f), r.Path)
	}
	for _, port := range p.ConnectTCP {
		field("connect", strconv.Itoa(int(port)))
	}
	for _, port := range p.BindTCP {
		field("bind", strconv.Itoa(int(port)))
	}
	if p.AnyTCP {
		field("anytcp")
	}
	if p.Relay != nil {
		field("relay", strconv.Itoa(int(p.Relay.Port)))
	}
	for _, m := range p.NoExec {
		field("noexec", m)
	}
	if p.MaxProcs > 0 {
		field("procs", p.ProcsBy, strconv.Itoa(p.MaxProcs))
	}
	if p.Degraded {
		field("degraded")
	}
	if bytes.Count(b, []byte{0}) != planFields(p) {
		return nil, errors.New("sandbox plan: a path or argument holds a NUL")
	}
	return b, nil
}

// planFields is how many NULs p's encoding holds.
func planFields(p *Plan) int {
	n := 1 + 2*len(p.Argv) + 3*len(p.Paths) + 2*len(p.ConnectTCP) + 2*len(p.BindTCP) + 2*len(p.NoExec)
	if p.MaxProcs > 0 {
		n += 3
	}
	if p.Path != "" {
		n += 2
	}
	if p.AnyTCP {
		n++
	}
	if p.Relay != nil {
		n += 2
	}
	if p.Degraded {
		n++
	}
	return n
}

// decodePlan reads the encoding Encode writes.
func decodePlan(b []byte) (*Plan, error) {
	next := func() (string, bool) {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return "", false
		}
		v := string(b[:i])
		b = b[i+1:]
		return v, true
	}
	if h, ok := next(); !ok || h != planHeader {
		return nil, errors.New("no plan header")
	}
	p := &Plan{}
	seen := map[string]bool{}
	for len(b) > 0 {
		name, ok := next()
		if !ok {
			return nil, errors.New("a field without its end")
		}
		switch name {
		case "path", "anytcp", "relay", "degraded", "procs":
			if seen[name] {
				return nil, fmt.Errorf("%s twice", name)
			}
			seen[name] = true
		}
		var err error
		switch name {
		case "path":
			if p.Path, ok = next(); !ok || p.Path == "" {
				return nil, errors.New("path without a value")
			}
		case "arg":
			a, ok := next()
			if !ok {
				return nil, errors.New("arg without a value")
			}
			p.Argv = append(p.Argv, a)
		case "rule":
			r, err := decodeRule(next)
			if err != nil {
				return nil, err
			}
			p.Paths = append(p.Paths, r)
		case "connect", "bind":
			port, err := decodePort(next)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if name == "connect" {
				p.ConnectTCP = append(p.ConnectTCP, port)
			} else {
				p.BindTCP = append(p.BindTCP, port)
			}
		case "anytcp":
			p.AnyTCP = true
		case "relay":
			r := &Relay{}
			if r.Port, err = decodePort(next); err != nil {
				return nil, fmt.Errorf("relay: %v", err)
			}
			p.Relay = r
		case "noexec":
			m, ok := next()
			if !ok || m == "" {
				return nil, errors.New("noexec without a path")
			}
			p.NoExec = append(p.NoExec, m)
		case "procs":
			if p.ProcsBy, ok = next(); !ok || (p.ProcsBy != ProcsPidMax && p.ProcsBy != ProcsRlimit) {
				return nil, fmt.Errorf("procs: no way %q", p.ProcsBy)
			}
			v, ok := next()
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n < 1 || n > maxProcs || strconv.Itoa(n) != v {
				return nil, fmt.Errorf("procs: no count in %q", v)
			}
			p.MaxProcs = n
		case "degraded":
			p.Degraded = true
		default:
			return nil, fmt.Errorf("unknown field %q", name)
		}
	}
	return p, nil
}

func decodeRule(next func() (string, bool)) (PathRule, error) {
	var r PathRule
	f, ok := next()
	if !ok {
		return r, errors.New("rule without its rights")
	}
	if r.Path, ok = next(); !ok {
		return r, errors.New("rule without its path")
	}
	rights := [4]*bool{&r.Read, &r.Write, &r.Exec, &r.Optional}
	at := 0
	for i := 0; i < len(f); i++ {
		j := strings.IndexByte("rwxo"[at:], f[i])
		if j < 0 {
			return r, fmt.Errorf("rule rights %q are not a subset of rwxo in order", f)
		}
		at += j
		*rights[at] = true
		at++
	}
	return r, nil
}

func decodePort(next func() (string, bool)) (uint16, error) {
	v, ok := next()
	if !ok || v == "" || len(v) > 5 || (len(v) > 1 && v[0] == '0') {
		return 0, fmt.Errorf("no port in %q", v)
	}
	n, err := strconv.ParseUint(v, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("no port in %q", v)
	}
	return uint16(n), nil
}
