package hub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"

	"lnk.dev/lnk/internal/lines"
)

// MaxLine caps one message from the server: the tool bridge's one cap,
// on a request and on an answer (toolbridge.MaxBody; tools-and-asking.txt
// "Namespace servers": request and answer sizes keep the tool bridge's
// cap). A server whose message passes it is ended (readServer).
const MaxLine = 8 << 20

// IDRoom is what an id put in place of another may add to a message: the
// hub's own toward the server, or a session's put back on an answer,
// each at most 20 digits. A session's message is capped at MaxLine and
// this room (the bridge sends a request of at most MaxLine with its own
// id), and so is an answer the bridge reads from the hub.
const IDRoom = 64

// message is one JSON-RPC message as the hub routes it.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(bytes.TrimSpace(id), []byte("null"))
}

func (m *message) isRequest() bool      { return m.Method != "" && hasID(m.ID) }
func (m *message) isNotification() bool { return m.Method != "" && !hasID(m.ID) }
func (m *message) isResponse() bool     { return m.Method == "" && hasID(m.ID) }

var errTooLong = errors.New("a message over the hub's cap")

// readLine reads one message of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) { return lines.Read(br, max, errTooLong) }

func errorLine(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

func resultLine(id, result json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

// setField returns the object obj with key set to v (obj as it is else).
func setField(obj json.RawMessage, key string, v json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	m[key] = v
	b, _ := json.Marshal(m)
	return b
}

// progressToken returns params._meta.progressToken, if set.
func progressToken(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || !hasID(p.Meta.Token) {
		return nil
	}
	return p.Meta.Token
}

// withProgressToken sets params._meta.progressToken to tok.
func withProgressToken(params json.RawMessage, tok json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	p["_meta"] = setField(p["_meta"], "progressToken", tok)
	b, _ := json.Marshal(p)
	return b
}
