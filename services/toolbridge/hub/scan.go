package hub

import (
	"encoding/json"
	"errors"
	"strings"

	"lnk.dev/lnk/internal/jsonscan"
)

// A parsed message keeps where its id stood in the line, so the hub
// rewrites an id by splicing the line, never decoding and encoding a
// large result or argument again.

var errNotMessage = errors.New("not a JSON-RPC object")

// span is where one top-level value stands in a line; the zero span is
// no id.
type span = jsonscan.Span

// parse reads line's top-level members into a message whose raw values
// are slices of line (no copy), and says where the id stood. A line that
// isn't valid JSON, isn't an object, or names one of a message's members
// twice, or in another case ("ID", which encoding/json would read as the
// member), is refused: a peer reading one id and the hub another must
// never happen.
func parse(line []byte) (message, span, error) {
	var m message
	var id span
	seen := map[string]bool{}
	bad := false
	err := jsonscan.Members(line, func(key string, v span) {
		name, ok := member(key)
		if !ok {
			return
		}
		if name != key || seen[name] {
			bad = true
			return
		}
		seen[name] = true
		raw := json.RawMessage(line[v.Start:v.End:v.End])
		switch name {
		case "jsonrpc":
			bad = bad || json.Unmarshal(raw, &m.JSONRPC) != nil
		case "method":
			bad = bad || json.Unmarshal(raw, &m.Method) != nil
		case "id":
			m.ID, id = raw, v
		case "params":
			m.Params = raw
		case "result":
			m.Result = raw
		case "error":
			m.Error = raw
		}
	})
	if err != nil || bad {
		return message{}, span{}, errNotMessage
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
	if id.End == 0 {
		return line
	}
	return jsonscan.Splice(line, id, v)
}
