package toolbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// stripClientCapabilities removes the client's own capabilities from an
// initialize request's params (sampling, elicitation, roots, …), so a
// server never learns it could ask the client for a model or a folder
// (tools-and-asking.txt "What passes between them"). Everything else in
// params passes as it is.
func stripClientCapabilities(params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 {
		return params, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	for k := range p {
		if strings.EqualFold(k, "capabilities") { // in any case: encoding/json reads it so
			delete(p, k)
		}
	}
	p["capabilities"] = json.RawMessage(`{}`)
	return json.Marshal(p)
}

// stripParams is what passes of a request's params: for every
// initialize, the one starting a session or one sent inside it, without
// the client's capabilities, in params and in _meta; for the rest,
// without those in _meta.
func stripParams(m *message) (json.RawMessage, error) {
	params := m.Params
	if m.Method == "initialize" {
		var err error
		if params, err = stripClientCapabilities(params); err != nil {
			return nil, fmt.Errorf("initialize: %w", err)
		}
	}
	return stripMetaCapabilities(params)
}

// stripMetaCapabilities removes client capabilities a request carries in
// its _meta (the 2026-07-28 revision sends them with each request, as
// io.modelcontextprotocol/clientCapabilities). Params holding an _meta
// are written again as encoding/json read them, so an _meta written
// twice (the last read) passes once, without them.
func stripMetaCapabilities(params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 || !mayHaveMeta(params) {
		return params, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return params, nil // not an object: passed as it is; the server judges it
	}
	changed := false
	for key, raw := range p {
		if !strings.EqualFold(key, "_meta") { // in any case: encoding/json reads it so
			continue
		}
		changed = true // written again: a reader that takes the first of two _meta finds none left
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			continue // not an object: it holds no capabilities
		}
		for k := range meta {
			if strings.EqualFold(k, "capabilities") || strings.EqualFold(k, "clientCapabilities") || strings.EqualFold(k, "io.modelcontextprotocol/clientCapabilities") {
				delete(meta, k)
			}
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		p[key] = b
	}
	if !changed {
		return params, nil
	}
	return json.Marshal(p)
}

// callName is the name a call's rules are matched against: a tools/call's
// tool name; "resources/read" and "prompts/get" for those; "" for a
// request that never asks (listing, ping, initialize). A call whose params
// could be read two ways is refused (callParams).
func callName(m *message) (string, bool, error) {
	switch m.Method {
	case "tools/call":
		p, err := callParams(m.Params)
		if err != nil {
			return "", true, err
		}
		var name string
		if raw := p["name"]; len(raw) > 0 {
			setString(&name, raw, "name") // not a string: no name, which no rule allows
		}
		return name, true, nil
	case "resources/read", "prompts/get":
		_, err := callParams(m.Params)
		return m.Method, true, err
	}
	return "", false, nil
}

// judgedKeys are the members of a call's params the bridge judges it by:
// the name matched against the rules, and what the owner is shown.
var judgedKeys = [...]string{"name", "arguments", "uri"}

// callParams reads a call's judged params as MCP's SDKs read them: each
// key exactly as written. One written twice, or in another case (which
// encoding/json, unlike the go-sdk or JavaScript, reads as the same
// field), could be read as another call by the server, and is refused.
// Params that are not an object give none.
func callParams(params json.RawMessage) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	var twice string
	err := members(params, func(k string, v span) {
		for _, j := range judgedKeys {
			if strings.EqualFold(k, j) {
				if _, seen := out[j]; seen || k != j {
					twice = j
				}
				out[j] = params[v.Start:v.End]
			}
		}
	})
	if err != nil {
		return map[string]json.RawMessage{}, nil
	}
	if twice != "" {
		return nil, fmt.Errorf("the call's %q is written twice or in another case, so it could be read as another call", twice)
	}
	return out, nil
}

// mayHaveMeta reports whether params could hold a _meta member: a
// request with neither "_meta" (in any case) nor an escape that could
// spell it (\u…) is passed without being decoded, as most are.
func mayHaveMeta(params []byte) bool {
	if bytes.Contains(params, []byte(`\u`)) {
		return true
	}
	for i := bytes.IndexByte(params, '_'); i >= 0; {
		if rest := params[i+1:]; len(rest) >= 4 && bytes.EqualFold(rest[:4], []byte("meta")) {
			return true
		}
		j := bytes.IndexByte(params[i+1:], '_')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
