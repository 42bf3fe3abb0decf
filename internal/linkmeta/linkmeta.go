// Package linkmeta is the harness contract's _meta on a tool call: the
// keys Link Harness sets on every call (the conversation's name, its
// hops, its tools) and the one reading of them by Link's own tools' servers
// (run, memory).
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
)

// The _meta keys every call of Link Harness carries.
const (
	Thread = "link.local/thread"
	Hops   = "link.local/hops"
	Tools  = "link.local/tools"
)

// Call is a tool call's arguments and the conversation its _meta names
// ("" for none).
func Call(req *mcp.CallToolRequest) (args json.RawMessage, thread string) {
	if req == nil || req.Params == nil {
		return nil, ""
	}
	thread, _ = req.Params.GetMeta()[Thread].(string)
	return req.Params.Arguments, thread
}
