package secrets

import (
	"errors"
	"fmt"
	"sort"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/secret"
)

// Refusal is a rule's refusal of a change to the secrets (Link's one
// refusal shape, internal/refusal); callers tell them apart with
// errors.Is against the values below. It names a Rule: the CLI exits 3.
type Refusal = refusal.Refusal

// The refusals.
var (
	ErrExists   = &Refusal{Reason: "a secret of that name exists", Rule: "a secret of that name exists"}
	ErrNoSecret = errors.New("no such secret")
	ErrNotHeld  = errors.New("the agent does not hold that secret")
)

// Create adds secret name with value, sealed to host when host is set,
// its value added to the request headers named (Authorization when none
// is). It takes value; the caller must not Destroy it.
func Create(home, name string, value *secret.Value, host string, headers ...string) error {
	if err := CheckName(name); err != nil {
		value.Destroy()
		return err
	}
	if host != "" {
		if err := CheckHost(host); err != nil {
			value.Destroy()
			return err
		}
	}
	headers, err := checkHeaders(host, headers)
	if err != nil {
		value.Destroy()
		return err
	}
	if value.Len() == 0 || value.Len() > MaxValueSize {
		value.Destroy()
		return fmt.Errorf("%w: a secret's value is 1 byte to 64 KiB", ErrSyntax)
	}
	return Update(home, func(f *File) error {
		if _, ok := f.Secrets[name]; ok {
			value.Destroy()
			return fmt.Errorf("%w: %s", ErrExists, name)
		}
		f.Secrets[name] = &Entry{Value: value, InternetHost: host, Headers: headers}
		return nil
	})
}

// Grant gives secret name to agent id.
func Grant(home, name, id string) error {
	if err := CheckAgentID(id); err != nil {
		return err
	}
	return Update(home, func(f *File) error {
		e, ok := f.Secrets[name]
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoSecret, name)
		}
		if e.GrantedTo(id) {
			return nil
		}
		if len(e.Agents) >= MaxAgents {
			return fmt.Errorf("%w: secret %s is granted to %d agents already", ErrSyntax, name, MaxAgents)
		}
		e.Agents = append(e.Agents, id)
		sort.Strings(e.Agents)
		return nil
	})
}

// Revoke takes secret name from agent id.
func Revoke(home, name, id string) error {
	return Update(home, func(f *File) error {
		e, ok := f.Secrets[name]
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoSecret, name)
		}
		for i, a := range e.Agents {
			if a == id {
				e.Agents = append(e.Agents[:i], e.Agents[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("%w: %s", ErrNotHeld, name)
	})
}

// Remove deletes secret name and zeroes its value.
func Remove(home, name string) error {
	return Update(home, func(f *File) error {
		e, ok := f.Secrets[name]
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoSecret, name)
		}
		e.Value.Destroy()
		delete(f.Secrets, name)
		return nil
	})
}

// Listed is what list shows of a secret: never its value.
type Listed struct {
	Name         string `json:"name"`
	Sealed       bool   `json:"sealed"`
	InternetHost string `json:"internet_host,omitempty"`
	// Headers, for a sealed secret, are the request headers its value is
	// added to (Authorization when its grant names none).
	Headers []string `json:"headers,omitempty"`
	Agents  []string `json:"agents"`
}

// List describes every secret, by name, without a value.
func List(home string) ([]Listed, error) {
	f, err := Load(home)
	if err != nil {
		return nil, err
	}
	defer f.Destroy()
	out := []Listed{}
	for _, n := range f.Names() {
		e := f.Secrets[n]
		l := Listed{Name: n, Sealed: e.Sealed(), InternetHost: e.InternetHost, Agents: append([]string{}, e.Agents...)}
		if e.Sealed() {
			l.Headers = e.Seal().Headers
		}
		out = append(out, l)
	}
	return out, nil
}
