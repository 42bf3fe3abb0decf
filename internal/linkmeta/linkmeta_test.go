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

// A call's hops are its _meta's whole number; absent is 0, and any other
// value is not ok (refused by the caller, never read as 0).
func TestCallHops(t *testing.T) {
	for _, c := range []struct {
		meta mcp.Meta
		want int
		ok   bool
	}{
		{mcp.Meta{Hops: float64(3)}, 3, true},
		{mcp.Meta{Hops: 3}, 3, true},
		{mcp.Meta{Thread: "main"}, 0, true},
		{nil, 0, true},
		{mcp.Meta{Hops: "3"}, 0, false},
		{mcp.Meta{Hops: float64(-1)}, 0, false},
		{mcp.Meta{Hops: 1.5}, 0, false},
		{mcp.Meta{Hops: float64(MaxHops + 1)}, 0, false},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: c.meta}}
		if n, ok := CallHops(req); n != c.want || ok != c.ok {
			t.Errorf("meta %v: %d %v, want %d %v", c.meta, n, ok, c.want, c.ok)
		}
	}
}
