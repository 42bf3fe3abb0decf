package toolbridge

import (
	"bytes"
	"encoding/json"
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
	p["capabilities"] = json.RawMessage(`{}`)
	return json.Marshal(p)
}

// stripMetaCapabilities removes client capabilities a request carries in
// its _meta (the 2026-07-28 revision sends them with each request).
func stripMetaCapabilities(params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 || !mayHaveMeta(params) {
		return params, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return params, nil // not an object: passed as it is; the server judges it
	}
	raw, ok := p["_meta"]
	if !ok {
		return params, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &meta); err != nil {
		return params, nil
	}
	changed := false
	for k := range meta {
		if k == "capabilities" || k == "clientCapabilities" || k == "io.modelcontextprotocol/clientCapabilities" {
			delete(meta, k)
			changed = true
		}
	}
	if !changed {
		return params, nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	p["_meta"] = b
	return json.Marshal(p)
}

// callName is the name a call's rules are matched against: a tools/call's
// tool name; "resources/read" and "prompts/get" for those; "" for a
// request that never asks (listing, ping, initialize).
func callName(m *message) (string, bool) {
	switch m.Method {
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(m.Params, &p)
		return p.Name, true
	case "resources/read", "prompts/get":
		return m.Method, true
	}
	return "", false
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
