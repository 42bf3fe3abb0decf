package toolbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxBody caps one request's body: one JSON-RPC message of at most 8 MB
// (tools-and-asking.txt "Reaching it").
const MaxBody = 8 << 20

// message is one JSON-RPC 2.0 message as the bridge sees it: only what it
// needs to route, check and rewrite. Params, result and error are kept raw
// and passed on as they are, but for the rewrites the spec names.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// Errors a request is refused with.
var (
	ErrBatch    = errors.New("a batch: one JSON-RPC message per request")
	ErrNotRPC   = errors.New("not a JSON-RPC 2.0 message")
	ErrTooLarge = fmt.Errorf("a body over %d bytes", MaxBody)
)

func (m *message) isRequest() bool      { return m.Method != "" && hasID(m.ID) }
func (m *message) isNotification() bool { return m.Method != "" && !hasID(m.ID) }
func (m *message) isResponse() bool     { return m.Method == "" && hasID(m.ID) }

func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(bytes.TrimSpace(id), []byte("null"))
}

// parseMessage decodes one client message: one object, JSON-RPC 2.0, an
// id that is a string or a number, nothing after it.
func parseMessage(b []byte) (*message, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return nil, ErrBatch
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, ErrNotRPC
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil { // data after the object is an error too
		return nil, fmt.Errorf("%w: %v", ErrNotRPC, err)
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("%w: jsonrpc is %q", ErrNotRPC, m.JSONRPC)
	}
	// The id is valid JSON; its first byte tells a string or a number.
	if hasID(m.ID) {
		if c := bytes.TrimSpace(m.ID)[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
			return nil, fmt.Errorf("%w: an id is a string or a number", ErrNotRPC)
		}
	}
	if m.Method == "" && !hasID(m.ID) {
		return nil, fmt.Errorf("%w: neither a method nor an id", ErrNotRPC)
	}
	return &m, nil
}

// notificationsPassed are MCP's own notifications, the only messages
// without an id that reach a server (tools-and-asking.txt "A message
// without an id").
var notificationsPassed = map[string]bool{
	"notifications/initialized":        true,
	"notifications/cancelled":          true,
	"notifications/progress":           true,
	"notifications/roots/list_changed": true,
}

// errorResponse is a JSON-RPC error answer to id.
func errorResponse(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}

// JSON-RPC error codes the bridge answers with.
const (
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeRefused        = -32001 // the owner's rules or answer refused the call
	codeGone           = -32002 // the session ended (idle, re-added or removed tool, server died)
)
