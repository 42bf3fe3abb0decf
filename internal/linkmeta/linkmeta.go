// Package linkmeta is the harness contract's _meta on a tool call: the
// keys Link Harness sets on every call (the conversation's name, its
// hops, its tools, its model) and the one reading of them by Link's own
// tools' servers (run, memory, scheduler).
//
// # Security
//
// What _meta says is the harness's word, trusted as far as the spec
// trusts it (security.txt "Run and file": a start's conversation and
// hops come from the harness). A value of the wrong type reads as
// absent: a call naming no conversation sees none.
package linkmeta

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolname"
)

// The _meta keys every call of Link Harness carries.
const (
	Thread = "link.local/thread"
	Hops   = "link.local/hops"
	Tools  = "link.local/tools"
	// Model is the model the calling conversation runs on.
	Model = "link.local/model"
)

// MaxTools bounds the tools a call's _meta may name.
const MaxTools = 256

// Call is a tool call's arguments and the conversation its _meta names
// ("" for none).
func Call(req *mcp.CallToolRequest) (args json.RawMessage, thread string) {
	if req == nil || req.Params == nil {
		return nil, ""
	}
	thread, _ = req.Params.GetMeta()[Thread].(string)
	return req.Params.Arguments, thread
}

// CallHops is the hops a call's _meta names (link.local/hops): 0 when
// absent (a harness that counts none). ok is false for a value that is
// not a whole number from 0 to MaxHops: a caller refuses such a call
// rather than start a chain again at 0. A JSON number arrives as
// float64.
func CallHops(req *mcp.CallToolRequest) (hops int, ok bool) {
	if req == nil || req.Params == nil {
		return 0, true
	}
	v, there := req.Params.GetMeta()[Hops]
	if !there {
		return 0, true
	}
	switch n := v.(type) {
	case float64:
		if n >= 0 && n <= MaxHops && n == float64(int(n)) {
			return int(n), true
		}
	case int:
		if n >= 0 && n <= MaxHops {
			return n, true
		}
	}
	return 0, false
}

// MaxHops bounds the hops a call may name.
const MaxHops = 1 << 10

// CallTools is the tools a call's _meta names (link.local/tools): the
// granted names of the tools the calling conversation has. given is
// false when the key is absent (a harness that names none). ok is false
// for a value that is not a list of at most MaxTools names, each a
// tool's name by internal/toolname's rule (the one Link Harness offers
// by, so it never sends another): a caller refuses such a call rather
// than read it as "none" or "all". A JSON null is not a list.
func CallTools(req *mcp.CallToolRequest) (tools []string, given, ok bool) {
	if req == nil || req.Params == nil {
		return nil, false, true
	}
	v, there := req.Params.GetMeta()[Tools]
	if !there {
		return nil, false, true
	}
	list, isList := v.([]any)
	if !isList || len(list) > MaxTools {
		return nil, true, false
	}
	tools = make([]string, 0, len(list))
	for _, e := range list {
		s, isStr := e.(string)
		if !isStr || toolname.ToolRefusal(s) != "" {
			return nil, true, false
		}
		tools = append(tools, s)
	}
	return tools, true, true
}

// CallModel is the model a call's _meta names (link.local/model), "" for
// none. ok is false for a value that is not a model's name
// (internal/toolname: 1 to 256 bytes of printable ASCII, no space).
func CallModel(req *mcp.CallToolRequest) (model string, ok bool) {
	if req == nil || req.Params == nil {
		return "", true
	}
	v, there := req.Params.GetMeta()[Model]
	if !there {
		return "", true
	}
	s, isStr := v.(string)
	if !isStr || toolname.CheckModel(s) != nil {
		return "", false
	}
	return s, true
}
