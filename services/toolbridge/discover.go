package toolbridge

import "net/http"

// methodDiscover is MCP's stateless server/discover (SEP-2575), which the
// go-sdk's clients send before initialize at every session's start.
const methodDiscover = "server/discover"

// notOffered answers a server/discover sent outside a session: the bridge
// does not offer it (its sessions start with initialize), so it answers
// as a server without the method does, JSON-RPC's "method not found",
// which a client takes as "start with initialize" (the go-sdk falls back
// on any error but a version's). The answer is the bridge's own: no
// definition is read, no server started, no session opened, and nothing
// is logged, for a method the bridge does not have refuses nothing the
// owner's rules decide.
func notOffered(m *message) Reply {
	return Reply{Status: http.StatusOK, Body: errorResponse(m.ID, codeMethodNotFound, methodDiscover+" is not offered: a session starts with initialize")}
}
