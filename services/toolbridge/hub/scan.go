package hub

import (
	"encoding/json"
	"errors"
	"strings"
)

// A parsed message keeps where its id stood in the line, so the hub
// rewrites an id by splicing the line, never decoding and encoding a
// large result or argument again.

var errNotMessage = errors.New("not a JSON-RPC object")

// span is where one top-level value stands in a line: [start, end).
type span struct{ start, end int }

// parse reads line's top-level members into a message whose raw values
// are slices of line (no copy), and says where the id stood. A line that
// isn't valid JSON, isn't an object, or names one of a message's members
// twice, or in another case ("ID", which encoding/json would read as the
// member), is refused: a peer reading one id and the hub another must
// never happen.
func parse(line []byte) (message, span, error) {
	var m message
	var id span
	if !json.Valid(line) {
		return m, id, errNotMessage
	}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return m, id, errNotMessage
	}
	seen := map[string]bool{}
	i = skipSpace(line, i+1)
	for i < len(line) && line[i] != '}' {
		kEnd := skipString(line, i)
		var key string
		if err := json.Unmarshal(line[i:kEnd], &key); err != nil {
			return m, id, errNotMessage
		}
		i = skipSpace(line, kEnd) + 1 // the colon
		i = skipSpace(line, i)
		vEnd := skipValue(line, i)
		raw := json.RawMessage(line[i:vEnd:vEnd])
		if name, ok := member(key); ok {
			if name != key || seen[name] {
				return m, id, errNotMessage
			}
			seen[name] = true
		}
		switch key {
		case "jsonrpc":
			if json.Unmarshal(raw, &m.JSONRPC) != nil {
				return m, id, errNotMessage
			}
		case "method":
			if json.Unmarshal(raw, &m.Method) != nil {
				return m, id, errNotMessage
			}
		case "id":
			m.ID, id = raw, span{i, vEnd}
		case "params":
			m.Params = raw
		case "result":
			m.Result = raw
		case "error":
			m.Error = raw
		}
		i = skipSpace(line, vEnd)
		if i < len(line) && line[i] == ',' {
			i = skipSpace(line, i+1)
		}
	}
	return m, id, nil
}

var members = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// member says whether key names one of a message's members the way
// encoding/json matches them (any case); parse takes only the exact name.
func member(key string) (string, bool) {
	for _, n := range members {
		if strings.EqualFold(key, n) {
			return n, true
		}
	}
	return "", false
}

// withID is line with the value at id replaced by v; a line with no id
// is returned as it is.
func withID(line []byte, id span, v []byte) []byte {
	if id.end == 0 {
		return line
	}
	out := make([]byte, 0, len(line)-(id.end-id.start)+len(v))
	out = append(out, line[:id.start]...)
	out = append(out, v...)
	return append(out, line[id.end:]...)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote); b is valid JSON.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the value starting at b[i]; b is
// valid JSON.
func skipValue(b []byte, i int) int {
	switch {
	case i >= len(b):
		return i
	case b[i] == '"':
		return skipString(b, i)
	case b[i] == '{' || b[i] == '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) && !isDelim(b[i]) {
			i++
		}
		return i
	}
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
