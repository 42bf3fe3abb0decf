package endpoint

import (
	"net/http"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/textsafe"
)

// checkKept refuses a message by whether its conversation is kept (the
// harness's store, a.Has): into one that isn't, 404 unless the message
// may start it (conversation.MayStart: main, the owner's new one, a
// subagent's start, a sender's own); the owner's new one where one is
// kept already, 409; what can't be learned, 503. It returns the status,
// why ("" taken) and the rule the caller acts on.
func (a *agentState) checkKept(req MessageRequest, from string, subagentStart bool) (int, string, string) {
	kept, err := a.Has(req.Thread)
	switch {
	case err != nil:
		return http.StatusServiceUnavailable, "whether conversation " + req.Thread + " is kept can't be read, so nothing is taken: " + textsafe.Line(err.Error()), ""
	case kept && req.New:
		return http.StatusConflict, "conversation " + req.Thread + " exists already: a new one needs a name of its own", conversation.RuleExists
	case !kept && !conversation.MayStart(from, req.Thread, subagentStart, req.New):
		return http.StatusNotFound, "conversation " + req.Thread + " doesn't exist (none was started, or it was deleted): only the owner starts one", conversation.RuleMissing
	}
	return 0, "", ""
}
