package namespace

import (
	"errors"
	"fmt"
	"time"

	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Definition is the host's private namespace definition.
type Definition struct {
	Name    string
	Timeout time.Duration // a call's bound (30 s when zero)
	Actions []Action
}

// Action is one tool the namespace offers.
type Action struct {
	Name      string
	Broadcast bool // a read: without kind, every target answers, joined under its kind
	Targets   []Target
}

// Target is one provider's tool an action may reach.
type Target struct {
	Kind     string // what a caller selects it by
	Provider string // a tool definition's name; never shown to a caller
	Tool     string // the provider's own tool name, kept as it is
}

// Errors a call is refused with; a caller tells them apart with errors.Is.
var (
	ErrDefinition   = errors.New("not a namespace definition")
	ErrNoAction     = errors.New("no such action")
	ErrKindRequired = errors.New("kind is required: the action has several targets")
	ErrKind         = errors.New("kind names no target of the action")
	ErrUnlisted     = errors.New("a field the target's schema does not list")
	ErrMissing      = errors.New("a field the target's schema requires is missing")
	ErrArguments    = errors.New("arguments are not one JSON object")
	ErrTooLarge     = errors.New("over the bridge's cap")
	ErrRemoved      = errors.New("the provider was removed")
	ErrClosed       = errors.New("the namespace is closed")
	ErrRefused      = errors.New("refused by the provider's approval policy")
)

// Check refuses a definition without actions, an action without targets,
// a name, kind or provider that is not one, or two targets of one kind.
func (d *Definition) Check() error {
	if err := tooldef.CheckName(d.Name); err != nil {
		return fmt.Errorf("%w: %v", ErrDefinition, err)
	}
	if len(d.Actions) == 0 {
		return fmt.Errorf("%w: %s has no action", ErrDefinition, d.Name)
	}
	seen := map[string]bool{}
	for _, a := range d.Actions {
		if a.Name == "" || seen[a.Name] {
			return fmt.Errorf("%w: action %q is empty or named twice", ErrDefinition, a.Name)
		}
		seen[a.Name] = true
		if len(a.Targets) == 0 {
			return fmt.Errorf("%w: action %s has no target", ErrDefinition, a.Name)
		}
		kinds := map[string]bool{}
		for _, t := range a.Targets {
			if t.Kind == "" || kinds[t.Kind] || t.Tool == "" {
				return fmt.Errorf("%w: action %s: kind %q is empty or twice, or no tool", ErrDefinition, a.Name, t.Kind)
			}
			kinds[t.Kind] = true
			if err := tooldef.CheckName(t.Provider); err != nil {
				return fmt.Errorf("%w: action %s: %v", ErrDefinition, a.Name, err)
			}
		}
	}
	return nil
}

func (d *Definition) action(name string) (*Action, error) {
	for i := range d.Actions {
		if d.Actions[i].Name == name {
			return &d.Actions[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNoAction, name)
}

// Select picks the targets a call reaches by its kind ("" when none was
// given): the one kind names; every target of a broadcast read; the one
// target of an action with one.
func (a *Action) Select(kind string) ([]Target, error) {
	if kind != "" {
		for _, t := range a.Targets {
			if t.Kind == kind {
				return []Target{t}, nil
			}
		}
		return nil, fmt.Errorf("%w: %q (%s takes %s)", ErrKind, kind, a.Name, a.kinds())
	}
	switch {
	case len(a.Targets) == 1:
		return a.Targets, nil
	case a.Broadcast:
		return a.Targets, nil
	}
	return nil, fmt.Errorf("%w: %s takes kind %s", ErrKindRequired, a.Name, a.kinds())
}

func (a *Action) kinds() string {
	s := ""
	for i, t := range a.Targets {
		if i > 0 {
			s += ", "
		}
		s += t.Kind
	}
	return s
}
