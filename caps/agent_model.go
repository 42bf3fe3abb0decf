package caps

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// What agent.toml says of Link Harness's model, read by lnk agent start:
//
//	[model]                       # none: Link's built-in model
//	format = "openai"             # "builtin", "openai" or "anthropic"
//	base_url = "http://127.0.0.1:11434/v1"
//	model = "llama3.2"
//
//	[model.fallback]              # none: no fallback (--fallback sets it)
//	format = "anthropic"          # "openai" or "anthropic"
//	base_url = "https://api.anthropic.com/v1"
//	model = "claude-sonnet-4-5"
//
// Link Harness sends a turn to the fallback when the model is off, silent
// for 60 s or can't hold the prompt, then keeps to the fallback for 3
// minutes (services/harness/model.WithFallback).

// AgentModel is agent.toml's [model].
type AgentModel struct {
	Format  string `toml:"format" json:"format"`
	BaseURL string `toml:"base_url,omitempty" json:"base_url,omitempty"`
	Model   string `toml:"model,omitempty" json:"model,omitempty"`
	// Fallback is [model.fallback]; never one of its own.
	Fallback *AgentModel `toml:"fallback,omitempty" json:"fallback,omitempty"`
}

// FallbackNone is lnk agent start --fallback's value that removes it.
const FallbackNone = "none"

// ParseFallbackFlag reads lnk agent start --fallback: FORMAT:URL:MODEL
// of an "openai" or "anthropic" model, or "none" (nil: no fallback).
func ParseFallbackFlag(s string) (*AgentModel, error) {
	if s == FallbackNone {
		return nil, nil
	}
	if s == ModelBuiltin {
		return nil, fmt.Errorf("--fallback builtin: the fallback is a model of a provider (FORMAT:URL:MODEL), never Link's built-in")
	}
	m, err := ParseModelFlag(s)
	if err != nil {
		return nil, fmt.Errorf("--fallback: %w", err)
	}
	return m, nil
}

// ModelBuiltin is the format naming Link's built-in model.
const ModelBuiltin = "builtin"

// ParseModelFlag reads lnk agent start --model: "builtin", or
// "<format>:<url>:<model>" where the URL has a path (…/v1), so a model's
// own ':' (llama3:8b) is never taken for the URL's port.
func ParseModelFlag(s string) (*AgentModel, error) {
	if s == ModelBuiltin {
		return &AgentModel{Format: ModelBuiltin}, nil
	}
	format, rest, ok := strings.Cut(s, ":")
	scheme := strings.Index(rest, "://")
	slash := -1
	if scheme > 0 {
		slash = strings.IndexByte(rest[scheme+3:], '/')
	}
	if !ok || slash < 0 {
		return nil, fmt.Errorf("--model %q is not builtin or FORMAT:URL:MODEL (a URL with its path, e.g. openai:http://127.0.0.1:11434/v1:llama3.2)", s)
	}
	pathAt := scheme + 3 + slash
	colon := strings.IndexByte(rest[pathAt:], ':')
	if colon < 0 {
		return nil, fmt.Errorf("--model %q names no model after its URL (FORMAT:URL:MODEL)", s)
	}
	m := &AgentModel{Format: format, BaseURL: rest[:pathAt+colon], Model: rest[pathAt+colon+1:]}
	return m, m.Check()
}

// Check refuses a [model] Link Harness can't use.
func (m *AgentModel) Check() error {
	if err := m.check(); err != nil {
		return err
	}
	if f := m.Fallback; f != nil {
		if f.Format == ModelBuiltin || f.Fallback != nil {
			return fmt.Errorf("[model.fallback] is an \"openai\" or \"anthropic\" model with no fallback of its own")
		}
		if err := f.check(); err != nil {
			return fmt.Errorf("[model.fallback]: %w", err)
		}
	}
	return nil
}

func (m *AgentModel) check() error {
	if m.Format == ModelBuiltin {
		// base_url is where lnk agent start found it running, on loopback.
		if m.Model != "" || (m.BaseURL != "" && m.LoopbackPort() == 0) {
			return fmt.Errorf("[model] format = \"builtin\" takes no model, and a base_url only on this machine's loopback (lnk agent start records it)")
		}
		return nil
	}
	if m.Format != "openai" && m.Format != "anthropic" {
		return fmt.Errorf("[model] format = %q: Link Harness speaks \"builtin\", \"openai\" or \"anthropic\"", m.Format)
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("[model] base_url %q is not an http(s) URL without user, query or fragment", m.BaseURL)
	}
	if m.Model == "" || len(m.Model) > 256 || strings.ContainsFunc(m.Model, func(r rune) bool { return r <= 0x20 || r == 0x7f }) {
		return fmt.Errorf("[model] model %q is empty, too long or holds a space or control character", m.Model)
	}
	return nil
}

// LoopbackPort is the port of a model on this machine's loopback (a
// local model, reached through the proxy for inference only), 0 for any
// other.
func (m *AgentModel) LoopbackPort() uint16 {
	u, err := url.Parse(m.BaseURL)
	if err != nil || u.Scheme != "http" {
		return 0
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	p, err := strconv.ParseUint(u.Port(), 10, 16)
	if err != nil || p < 1 {
		return 0
	}
	return uint16(p)
}
