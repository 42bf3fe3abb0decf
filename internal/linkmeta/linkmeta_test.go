package linkmeta

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolname"
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

// A call's tools are its _meta's list of names: absent is "not given"
// (the scheduler then takes the parent's whole list); a list of names is
// read as sent, [] as none; null, a string, a list holding a number, or
// a name internal/toolname's rule refuses (empty, a space, a '.', a "__",
// past toolname.MaxTool bytes) is refused, never read as none or all.
func TestCallTools(t *testing.T) {
	long := make([]any, MaxTools+1)
	for i := range long {
		long[i] = "t"
	}
	for _, c := range []struct {
		meta      mcp.Meta
		want      []string
		given, ok bool
	}{
		{nil, nil, false, true},
		{mcp.Meta{Tools: []any{"run-1", "file-1"}}, []string{"run-1", "file-1"}, true, true},
		{mcp.Meta{Tools: []any{}}, []string{}, true, true},
		{mcp.Meta{Tools: nil}, nil, true, false},
		{mcp.Meta{Tools: "run-1"}, nil, true, false},
		{mcp.Meta{Tools: []any{"run-1", 7.0}}, nil, true, false},
		{mcp.Meta{Tools: []any{""}}, nil, true, false},
		{mcp.Meta{Tools: []any{"a b"}}, nil, true, false},
		{mcp.Meta{Tools: []any{"run-1", "my.tool"}}, nil, true, false},
		{mcp.Meta{Tools: []any{"a__b"}}, nil, true, false},
		{mcp.Meta{Tools: []any{"-a"}}, nil, true, false},
		{mcp.Meta{Tools: []any{strings.Repeat("t", toolname.MaxTool+1)}}, nil, true, false},
		{mcp.Meta{Tools: []any{strings.Repeat("t", toolname.MaxTool)}}, []string{strings.Repeat("t", toolname.MaxTool)}, true, true},
		{mcp.Meta{Tools: long}, nil, true, false},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: c.meta}}
		got, given, ok := CallTools(req)
		if given != c.given || ok != c.ok || len(got) != len(c.want) || (c.want != nil) != (got != nil) {
			t.Errorf("meta %v: %q given %v ok %v, want %q %v %v", c.meta, got, given, ok, c.want, c.given, c.ok)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("meta %v: %q, want %q", c.meta, got, c.want)
			}
		}
	}
}

// A call's model is its _meta's clean name; absent is none; any other
// type, or a name with a control character, is refused.
func TestCallModel(t *testing.T) {
	for _, c := range []struct {
		meta mcp.Meta
		want string
		ok   bool
	}{
		{nil, "", true},
		{mcp.Meta{Model: "link-builtin"}, "link-builtin", true},
		{mcp.Meta{Model: 3.0}, "", false},
		{mcp.Meta{Model: "a\nb"}, "", false},
		{mcp.Meta{Model: ""}, "", false},
	} {
		got, ok := CallModel(&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: c.meta}})
		if got != c.want || ok != c.ok {
			t.Errorf("meta %v: %q %v, want %q %v", c.meta, got, ok, c.want, c.ok)
		}
	}
}
