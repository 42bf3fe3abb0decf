package toolbridge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
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
	m, err := readMessage(b)
	if err != nil { // data after the object is an error too
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
	return m, nil
}

// readMessage reads b, one JSON object, as json.Unmarshal reads it into
// a message — a member's name matched in any case, the last one written
// winning, null leaving a string as it was, any other value but a string
// an error — in one pass over b (it is validated once), its raw members
// slices of b rather than copies. FuzzParseMessage holds it to
// encoding/json.
func readMessage(b []byte) (*message, error) {
	m := &message{}
	var bad error
	err := members(b, func(k string, v span) {
		raw := json.RawMessage(b[v.Start:v.End:v.End])
		switch {
		case foldIs(k, "jsonrpc"):
			bad = cmp.Or(bad, setString(&m.JSONRPC, raw, "jsonrpc"))
		case foldIs(k, "id"):
			m.ID = raw
		case foldIs(k, "method"):
			bad = cmp.Or(bad, setString(&m.Method, raw, "method"))
		case foldIs(k, "params"):
			m.Params = raw
		case foldIs(k, "result"):
			m.Result = raw
		case foldIs(k, "error"):
			m.Error = raw
		}
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	return m, nil
}

// foldIs reports whether key names name as encoding/json matches a
// struct field's name: exactly, or else in any case (Unicode's simple
// folding, as bytes.EqualFold).
func foldIs(key, name string) bool { return key == name || strings.EqualFold(key, name) }

// setString decodes raw, a valid JSON value, into *s as json.Unmarshal
// does into a string field: null leaves *s as it was; a value not a
// string is an error.
func setString(s *string, raw []byte, name string) error {
	switch raw[0] {
	case 'n':
		return nil
	case '"':
	default:
		return fmt.Errorf("%s is not a string", name)
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c == '\\' || c >= utf8.RuneSelf {
			return json.Unmarshal(raw, s) // escapes, or UTF-8 to check
		}
	}
	*s = string(in)
	return nil
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
	codeCancelled      = -32800 // the client cancelled the request (LSP's RequestCancelled)
)
