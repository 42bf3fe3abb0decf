package endpoint

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"lnk.dev/lnk/internal/toolname"
)

// Subagent is a subagent's start as the way in hands it: the granted
// names of the tools its conversation has (never nil: [] is none) and
// the model it runs on ("" the agent's own). It travels in Link-Tools
// (a JSON array of names) and Link-Model, only with a Link-From of
// task-<id> into conversation task-<id>.
type Subagent struct {
	Tools []string
	Model string
}

// Header names of a subagent's start.
const (
	HeaderTools = "Link-Tools"
	HeaderModel = "Link-Model"
)

// maxSubagentTools bounds Link-Tools' names.
const maxSubagentTools = 256

// subagentOf reads a request's Link-Tools and Link-Model: nil when it
// carries neither. Either given needs Link-Tools exactly once, and a
// Link-From of task-<id> naming the message's own conversation: no other
// sender's message carries a subagent's list.
func subagentOf(h http.Header, from, thread string) (*Subagent, error) {
	tv, hasTools := h[http.CanonicalHeaderKey(HeaderTools)]
	mv, hasModel := h[http.CanonicalHeaderKey(HeaderModel)]
	if !hasTools && !hasModel {
		return nil, nil
	}
	if !strings.HasPrefix(from, "task-") || thread != from {
		return nil, errors.New(HeaderTools + " and " + HeaderModel + " come only with a subagent's message (" + HeaderFrom + " task-<id>) into its own conversation")
	}
	if len(tv) != 1 {
		return nil, errors.New("a subagent's message carries " + HeaderTools + " once")
	}
	s, err := parseSubagent(tv[0], mv)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// parseSubagent reads Link-Tools' value (a JSON array of tool names, at
// most 256) and Link-Model's values (none, or one model's name).
func parseSubagent(tools string, model []string) (*Subagent, error) {
	var names []string
	if err := json.Unmarshal([]byte(tools), &names); err != nil || names == nil {
		return nil, errors.New(HeaderTools + " is not a JSON array of tool names")
	}
	if len(names) > maxSubagentTools {
		return nil, errors.New(HeaderTools + " names more than 256 tools")
	}
	for _, n := range names {
		if err := toolname.CheckTool(n); err != nil {
			return nil, errors.New(HeaderTools + ": " + err.Error())
		}
	}
	s := &Subagent{Tools: names}
	switch {
	case len(model) > 1:
		return nil, errors.New("a subagent's message carries " + HeaderModel + " at most once")
	case len(model) == 1:
		if err := toolname.CheckModel(model[0]); err != nil {
			return nil, errors.New(HeaderModel + ": " + err.Error())
		}
		s.Model = model[0]
	}
	return s, nil
}

// setSubagent sets s's headers on a request.
func setSubagent(h http.Header, s *Subagent) {
	tools := s.Tools
	if tools == nil {
		tools = []string{}
	}
	b, _ := json.Marshal(tools)
	h.Set(HeaderTools, string(b))
	if s.Model != "" {
		h.Set(HeaderModel, s.Model)
	}
}
