package web

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcpstdio"
)

// Gate is t reading no message while calls tools/call requests are
// unanswered (calls ≤ 0: MaxCalls): a client that sends calls without
// end waits in its own pipe, and the tool holds at most that many pages
// at once. It is the transport's one gate ([mcpstdio.Gate]), which on
// Link's own counts the fast path's calls too.
func Gate(t mcp.Transport, calls int) mcp.Transport {
	if calls <= 0 {
		calls = MaxCalls
	}
	return mcpstdio.Gate(t, calls)
}
