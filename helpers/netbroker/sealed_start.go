package netbroker

import (
	"crypto/x509"
	"errors"
	"fmt"
	"sort"

	"lnk.dev/lnk/internal/sealedgrant"
)

// SealedOptions wire a started proxy's sealed secrets: the names granted
// to its agent (never a value) and where their values come from.
type SealedOptions struct {
	// Names are the sealed secrets granted to the sandbox's agent.
	Names []string
	// Source hands each value and its host: sealedgrant.NetClient,
	// on the channel the starter handed this process.
	Source SealedSource
	// RootCAs are the CAs trusted upstream; the system's if nil.
	RootCAs *x509.CertPool
}

// Told is what a started proxy tells its starter for the sandbox, as
// one JSON line after the socket's path (cmd/lnk-netbroker): its secret
// and a placeholder per sealed secret. Neither is a secret's value.
type Told struct {
	Secret       string            `json:"secret"`
	Placeholders map[string]string `json:"placeholders,omitempty"`
}

// Told is what r's sandbox is told.
func (r *Running) Told() Told {
	return Told{Secret: r.Secret, Placeholders: r.Placeholders}
}

// sealedRoutes makes the [Sealed] route for o: a fresh placeholder per
// name, the proxy's secret in its path. Its Checker, Log and Inference
// are set by bindSealed once the proxy exists, before it serves.
func sealedRoutes(agentID, secret string, o *SealedOptions) (*Sealed, error) {
	if agentID == "" {
		return nil, errors.New("netbroker: sealed secrets are granted to an agent, and this run has none")
	}
	if o.Source == nil {
		return nil, errors.New("netbroker: sealed secrets without a keybroker channel")
	}
	names := append([]string(nil), o.Names...)
	sort.Strings(names)
	ph := map[string]string{}
	for _, n := range names {
		if !isSealedName(n) {
			return nil, fmt.Errorf("netbroker: %q is not a secret's name", n)
		}
		if _, dup := ph[n]; dup {
			return nil, fmt.Errorf("netbroker: sealed secret %s named twice", n)
		}
		ph[n] = NewPlaceholder(n)
	}
	return &Sealed{AgentID: agentID, RouteSecret: secret, Placeholders: ph, Source: o.Source, RootCAs: o.RootCAs}, nil
}

// ModelKeyName is the name of the model key of the agent named agent,
// AGENT_<AGENT>_MODEL_KEY ([sealedgrant.AgentSecretName]); "" for a run
// with no agent's name.
func ModelKeyName(agent string) string {
	if agent == "" || agent == noAgent {
		return ""
	}
	return sealedgrant.AgentSecretName(agent, sealedgrant.ModelKey)
}

// bindSealed gives s the proxy's own checker and log, and makes the
// agent's own model key, when it is among the sealed secrets, a model's
// key: its route passes inference only ([FilterInference]). The agent is
// the one the grants name (Rules.Agent, from Grants.AgentName).
// Any other secret stays a plain sealed secret.
func bindSealed(s *Sealed, p *Proxy) {
	s.Checker = p.Checker()
	s.Log = p.log
	if n := ModelKeyName(p.cfg.Rules.Agent); n != "" && s.Placeholders[n] != "" {
		s.Inference = map[string]bool{n: true}
	}
}

// isSealedName is a secret's name as keybroker/secrets has it: upper-case
// letters, digits and _, a letter first, at most 128.
func isSealedName(s string) bool {
	if s == "" || len(s) > 128 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
