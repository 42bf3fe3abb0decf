package namespace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Session is one provider's live session.
type Session interface {
	// Schemas are the provider's tools' input schemas, by tool name.
	Schemas(ctx context.Context) (map[string]Schema, error)
	Call(ctx context.Context, tool string, args map[string]json.RawMessage) (json.RawMessage, error)
	Close() error
}

// Starter starts a session of a provider as it is defined now.
type Starter func(ctx context.Context, def *tooldef.Definition) (Session, error)

// Approver checks one call against its provider's approval policy as it
// is now; an error refuses it.
type Approver func(ctx context.Context, provider, tool string, args map[string]json.RawMessage) error

// Providers is where provider definitions are reloaded at every call
// (tooldef.Store is one).
type Providers interface {
	Load(name string) (*tooldef.Definition, error)
}

// Namespace serves one host definition.
type Namespace struct {
	Def       Definition
	Providers Providers
	Start     Starter  // nil: StartStdio
	Approve   Approver // nil: every checked call passes

	mu       sync.Mutex
	sessions map[string]*live // by provider
	closed   bool
}

type live struct {
	s       Session
	digest  string
	schemas map[string]Schema
}

// Offered is one action as a caller discovers it.
type Offered struct {
	Name        string
	InputSchema Schema
}

// Tools offers every action with its merged schema, discovered from the
// providers as they are now.
func (n *Namespace) Tools(ctx context.Context) ([]Offered, error) {
	var out []Offered
	for i := range n.Def.Actions {
		a := &n.Def.Actions[i]
		schemas := map[string]Schema{}
		for _, t := range a.Targets {
			l, err := n.provider(ctx, t.Provider)
			if err != nil {
				return nil, err
			}
			s, ok := l.schemas[t.Tool]
			if !ok {
				return nil, fmt.Errorf("%w: provider of %s offers no tool %s", ErrDefinition, t.Kind, t.Tool)
			}
			schemas[t.Kind] = s
		}
		m, err := Merge(a, schemas)
		if err != nil {
			return nil, err
		}
		out = append(out, Offered{Name: a.Name, InputSchema: m})
	}
	return out, nil
}

// Call runs one call of action with raw arguments: selected by kind,
// each target's provider reloaded, the arguments checked against each
// target's own schema, then approved, then forwarded within the host's
// timeout. A broadcast's results are joined under each target's kind.
func (n *Namespace) Call(ctx context.Context, action string, raw []byte) (json.RawMessage, error) {
	a, err := n.Def.action(action)
	if err != nil {
		return nil, err
	}
	args, err := ParseArguments(raw)
	if err != nil {
		return nil, err
	}
	// With one target, kind is no selector: the target's own field, if
	// its schema lists one.
	kind := ""
	if len(a.Targets) > 1 {
		if kind, err = takeKind(args); err != nil {
			return nil, err
		}
	}
	targets, err := a.Select(kind)
	if err != nil {
		return nil, err
	}
	sessions := make([]*live, len(targets))
	for i, t := range targets {
		l, err := n.provider(ctx, t.Provider)
		if err != nil {
			return nil, err
		}
		s, ok := l.schemas[t.Tool]
		if !ok {
			return nil, fmt.Errorf("%w: provider of %s offers no tool %s", ErrDefinition, t.Kind, t.Tool)
		}
		if err := CheckArguments(s, args); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", a.Name, t.Kind, err)
		}
		sessions[i] = l
	}
	if n.Approve != nil {
		for _, t := range targets {
			if err := n.Approve(ctx, t.Provider, t.Tool, args); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrRefused, err)
			}
		}
	}
	timeout := n.Def.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	joined := map[string]json.RawMessage{}
	for i, t := range targets {
		res, err := sessions[i].s.Call(ctx, t.Tool, args)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", a.Name, t.Kind, err)
		}
		if len(res) > MaxBody {
			return nil, fmt.Errorf("%s (%s): an answer %w", a.Name, t.Kind, ErrTooLarge)
		}
		if kind != "" || len(a.Targets) == 1 {
			return res, nil
		}
		joined[t.Kind] = res
	}
	b, err := json.Marshal(joined)
	if err == nil && len(b) > MaxBody {
		err = fmt.Errorf("a joined answer %w", ErrTooLarge)
	}
	return b, err
}

// provider reloads name's definition and returns its session: the one
// running if its launch is unchanged, else a fresh one. A removed
// provider is refused and its session ended.
func (n *Namespace) provider(ctx context.Context, name string) (*live, error) {
	def, err := n.Providers.Load(name)
	if err != nil {
		n.end(name)
		if errors.Is(err, tooldef.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrRemoved, name)
		}
		return nil, err
	}
	defer def.Destroy()
	digest := def.Digest()
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	l := n.sessions[name]
	n.mu.Unlock()
	if l != nil && l.digest == digest {
		return l, nil
	}
	n.end(name) // a changed launch needs a fresh session
	start := n.Start
	if start == nil {
		start = StartStdio
	}
	s, err := start(ctx, def)
	if err != nil {
		return nil, fmt.Errorf("starting provider %s: %w", name, err)
	}
	schemas, err := s.Schemas(ctx)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("discovering provider %s: %w", name, err)
	}
	l = &live{s: s, digest: digest, schemas: schemas}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		s.Close()
		return nil, ErrClosed
	}
	if old := n.sessions[name]; old != nil {
		old.s.Close()
	}
	if n.sessions == nil {
		n.sessions = map[string]*live{}
	}
	n.sessions[name] = l
	return l, nil
}

func (n *Namespace) end(name string) {
	n.mu.Lock()
	l := n.sessions[name]
	delete(n.sessions, name)
	n.mu.Unlock()
	if l != nil {
		l.s.Close()
	}
}

// Close ends every session the namespace started; later calls are
// refused.
func (n *Namespace) Close() {
	n.mu.Lock()
	n.closed = true
	ss := n.sessions
	n.sessions = nil
	n.mu.Unlock()
	for _, l := range ss {
		l.s.Close()
	}
}
