package linkmeta

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call's conversation is its _meta's string; any other type, or no
// _meta, names none, and the arguments come as sent.
func TestCall(t *testing.T) {
	args := json.RawMessage(`{"x":1}`)
	for _, c := range []struct {
		meta mcp.Meta
		want string
	}{
		{mcp.Meta{Thread: "main"}, "main"},
		{mcp.Meta{Thread: 7}, ""},
		{nil, ""},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: c.meta, Arguments: args}}
		a, th := Call(req)
		if th != c.want || string(a) != string(args) {
			t.Errorf("meta %v: %q %s, want %q", c.meta, th, a, c.want)
		}
	}
	if a, th := Call(&mcp.CallToolRequest{}); a != nil || th != "" {
		t.Errorf("no params: %s %q", a, th)
	}
}
