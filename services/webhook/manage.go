package webhook

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"time"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
	"lnk.dev/lnk/internal/secret"
)

// SecretName is the name of webhook id's current secret in secrets.toml;
// its previous one, during a roll, is SecretName(id)+"_PREVIOUS". Both
// are granted to no agent: only the listener, outside every sandbox,
// reads them.
func SecretName(id string) string { return "WEBHOOK_" + strings.ToUpper(id) }

func previousName(id string) string { return SecretName(id) + "_PREVIOUS" }

// Shown is what Add and Roll give the owner once: the webhook, its
// listener's port and its secret's text form (whsec_…), which the caller
// shows and destroys.
type Shown struct {
	Hook   Hook
	Port   int
	Secret *secret.Value
}

// newShownSecret makes a fresh secret's text form twice: one to keep in
// secrets.toml (which holds text), one to show.
func newShownSecret() (kept, shown *secret.Value, err error) {
	raw, err := scheme.NewSecret()
	if err != nil {
		return nil, nil, err
	}
	defer raw.Destroy()
	if kept, err = scheme.FormatSecret(raw); err != nil {
		return nil, nil, err
	}
	if shown, err = clone(kept); err != nil {
		kept.Destroy()
		return nil, nil, err
	}
	return kept, shown, nil
}

// Add makes webhook name: a fresh id and secret, and, at the agent's
// first webhook, a free port on 127.0.0.1 kept for its listener.
func (a Agent) Add(name string, now time.Time) (Shown, error) {
	if err := CheckName(name); err != nil {
		return Shown{}, err
	}
	h := Hook{Name: name, ID: newID(), Created: now.UTC().Truncate(time.Second)}
	var out Shown
	err := a.update(func(s *Settings) error {
		if s.Find(name) != nil {
			return fmt.Errorf("%w: %s", ErrExists, name)
		}
		if len(s.Hooks) >= MaxHooks {
			return ErrTooMany
		}
		if s.Port == 0 {
			p, err := freePort()
			if err != nil {
				return err
			}
			s.Port = p
		}
		key, shown, err := newShownSecret()
		if err != nil {
			return err
		}
		// The secret first: a record never names a webhook whose
		// secret is missing. Should the record's write fail, the
		// secret is removed below.
		if err := secrets.Create(a.Home, SecretName(h.ID), key, ""); err != nil {
			shown.Destroy()
			return err
		}
		s.Hooks = append(s.Hooks, h)
		out = Shown{Hook: h, Port: s.Port, Secret: shown}
		return nil
	})
	if err != nil {
		if out.Secret != nil {
			out.Secret.Destroy()
			secrets.Remove(a.Home, SecretName(h.ID))
		}
		return Shown{}, err
	}
	return out, nil
}

// Roll gives webhook name a new secret and keeps taking the previous one
// for 24 hours (scheme.RollOverlap), or until RollDone. A roll during a
// roll drops the oldest secret.
func (a Agent) Roll(name string, now time.Time) (Shown, error) {
	var out Shown
	err := a.update(func(s *Settings) error {
		h := s.Find(name)
		if h == nil {
			return fmt.Errorf("%w: %s", ErrNoHook, name)
		}
		key, shown, err := newShownSecret()
		if err != nil {
			return err
		}
		until := now.Add(scheme.RollOverlap).UTC().Truncate(time.Second)
		err = secrets.Update(a.Home, func(f *secrets.File) error {
			cur, ok := f.Secrets[SecretName(h.ID)]
			if !ok {
				return fmt.Errorf("%w: %s (lnk agent webhook remove, then add, makes a new one)", secrets.ErrNoSecret, SecretName(h.ID))
			}
			if old, ok := f.Secrets[previousName(h.ID)]; ok {
				old.Value.Destroy()
			}
			f.Secrets[previousName(h.ID)] = cur
			f.Secrets[SecretName(h.ID)] = &secrets.Entry{Value: key}
			return nil
		})
		if err != nil {
			key.Destroy()
			shown.Destroy()
			return err
		}
		h.PreviousUntil = &until
		out = Shown{Hook: *h, Port: s.Port, Secret: shown}
		return nil
	})
	return out, err
}

// RollDone stops taking webhook name's previous secret at once.
func (a Agent) RollDone(name string) error {
	return a.update(func(s *Settings) error {
		h := s.Find(name)
		if h == nil {
			return fmt.Errorf("%w: %s", ErrNoHook, name)
		}
		if err := removeSecrets(a.Home, previousName(h.ID)); err != nil {
			return err
		}
		h.PreviousUntil = nil
		return nil
	})
}

// Remove deletes webhook name and its secrets; its address then answers 404.
func (a Agent) Remove(name string) error {
	return a.update(func(s *Settings) error {
		h := s.Find(name)
		if h == nil {
			return fmt.Errorf("%w: %s", ErrNoHook, name)
		}
		if err := removeSecrets(a.Home, SecretName(h.ID), previousName(h.ID)); err != nil {
			return err
		}
		for i := range s.Hooks {
			if s.Hooks[i].Name == name {
				s.Hooks = append(s.Hooks[:i], s.Hooks[i+1:]...)
				break
			}
		}
		return nil
	})
}

// removeSecrets drops names from secrets.toml in one write; a missing one
// is already gone.
func removeSecrets(home string, names ...string) error {
	return secrets.Update(home, func(f *secrets.File) error {
		for _, n := range names {
			if e, ok := f.Secrets[n]; ok {
				e.Value.Destroy()
				delete(f.Secrets, n)
			}
		}
		return nil
	})
}

// Secrets are a webhook's secrets in their text form (whsec_…): the
// current one and, until PreviousUntil, the previous one.
type Secrets struct {
	Current       *secret.Value
	Previous      *secret.Value
	PreviousUntil time.Time
}

// Destroy zeroes both.
func (s Secrets) Destroy() {
	s.Current.Destroy()
	s.Previous.Destroy()
}

// Secrets reads webhook h's secrets now, as each post does: the current
// one and, until its expiry, the previous one. The caller destroys them.
func (a Agent) Secrets(h Hook, now time.Time) (Secrets, error) {
	f, err := secrets.Load(a.Home)
	if err != nil {
		return Secrets{}, err
	}
	defer f.Destroy()
	cur, ok := f.Secrets[SecretName(h.ID)]
	if !ok {
		return Secrets{}, fmt.Errorf("%w: %s", secrets.ErrNoSecret, SecretName(h.ID))
	}
	var out Secrets
	if out.Current, err = clone(cur.Value); err != nil {
		return Secrets{}, err
	}
	if prev, ok := f.Secrets[previousName(h.ID)]; ok && h.PreviousUntil != nil && now.Before(*h.PreviousUntil) {
		if out.Previous, err = clone(prev.Value); err != nil {
			out.Current.Destroy()
			return Secrets{}, err
		}
		out.PreviousUntil = *h.PreviousUntil
	}
	return out, nil
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// clone copies v into a Value of its own (secret.New zeroes the transient copy).
func clone(v *secret.Value) (*secret.Value, error) {
	defer runtime.KeepAlive(v)
	return secret.New(append([]byte(nil), v.Bytes()...))
}
