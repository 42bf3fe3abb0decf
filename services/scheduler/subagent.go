package scheduler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/linkmeta"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/toolname"
)

// Parent is what start_subagent knows of the agent, read from its
// settings before the server confines itself.
type Parent struct {
	// LinkHarness says the agent runs Link Harness, the one harness that
	// keeps a subagent's tool list with its conversation and narrows its
	// turns to it: under any other, no subagent is started.
	LinkHarness bool `json:"link_harness"`
	// AgentID names Link's own tools (run-<id>, …), so a call may name
	// them short (run).
	AgentID string `json:"agent_id"`
	// Tools are the agent's whole granted list, as the harness names its
	// tools: a parent's when its call's _meta names none.
	Tools []string `json:"tools"`
	// Models are [model] allow.
	Models []string `json:"models"`
	// Model is the agent's own model as Link Harness names it
	// (caps.Agent.HarnessModel): with Models, what a subagent may run on.
	Model string `json:"model"`
}

var startSchema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"what the subagent is to do: its first message"},"tools":{"type":"array","items":{"type":"string"},"description":"the tools it gets, by name: this conversation's or fewer (none given: all of this conversation's)"},"model":{"type":"string","description":"the model it runs on: one the agent's [model] allow names (none given: this conversation's)"}},"required":["task"],"additionalProperties":false}`)

// startArgs is start_subagent's arguments.
type startArgs struct {
	Task  string    `json:"task"`
	Tools *[]string `json:"tools,omitempty"`
	Model string    `json:"model,omitempty"`
}

// startSubagent writes a subagent's start, a job due now that the
// agent's supervisor fires through its way in (services/wayin, which
// caps the subagents at once and a day). Its tools are the parent's or
// fewer: the parent's list only from the harness's _meta (link.local/
// tools), within the agent's whole list (a name past it is refused), or,
// given none, the agent's whole list; a tool the call names that the
// parent lacks is refused, never added. Its model is the
// call's, else the parent's (_meta link.local/model), else the agent's
// own; the call's and the parent's are each held to the rule the harness
// keeps (caps.SubagentModelAllowed: the agent's own or one [model] allow
// names), one breaking it refused.
func (s *Server) startSubagent(c caller, raw json.RawMessage) (string, error) {
	if !s.Parent.LinkHarness {
		return "", &refusal.Refusal{Reason: "the agent's harness can't keep a subagent's tool list with its conversation (Link Harness alone does), so no subagent is started: it would have every tool it was meant not to",
			Hint: "an agent runs Link Harness when its agent.toml names no [start] command"}
	}
	parent, given, ok := linkmeta.CallTools(c.req)
	if !ok {
		return "", &refusal.Refusal{Reason: "the call's _meta link.local/tools is not a list of tool names: the parent's tools can't be known, so no subagent is started", Hint: "the harness names each call's conversation's tools in _meta"}
	}
	if !given {
		parent = s.Parent.Tools
	}
	// The harness says what its conversation has; what the agent has is
	// its grants', read before confinement: a list naming more is
	// refused, never passed on to a subagent.
	for _, n := range parent {
		if !slices.Contains(s.Parent.Tools, n) {
			return "", &refusal.Refusal{Reason: fmt.Sprintf("the call's _meta link.local/tools names %q, which is not among the agent's tools (%s): a subagent has its parent's tools or fewer, so none is started", n, strings.Join(s.Parent.Tools, ", ")),
				Hint: "lnk agent allow AGENT --tool " + n + " grants the agent a tool"}
		}
	}
	metaModel, ok := linkmeta.CallModel(c.req)
	if !ok {
		return "", &refusal.Refusal{Reason: "the call's _meta link.local/model is not a model's name", Hint: "the harness names each call's model in _meta"}
	}
	// The parent's model is the harness's word: a subagent started on it
	// runs on it, so it is held to the rule the harness keeps at each of
	// a subagent's turns (caps.SubagentModelAllowed), never recorded as
	// it came.
	if !caps.SubagentModelAllowed(s.Parent.Models, s.Parent.Model, metaModel) {
		return "", &refusal.Refusal{Reason: fmt.Sprintf("the call's _meta link.local/model %q is neither the agent's own model (%s) nor one its [model] allow names: a subagent would run on a model the agent may not use, so none is started", metaModel, orNone(s.Parent.Model)),
			Hint: "add it to [model] allow in the agent's Config/sandbox.toml"}
	}
	var a startArgs
	if err := decodeStrict(raw, &a); err != nil {
		return "", refusal.New("start_subagent's arguments: " + err.Error())
	}
	if a.Task == "" || len(a.Task) > MaxText {
		return "", refusal.New("a subagent's task is 1 to 4096 bytes")
	}
	tools, err := s.narrow(parent, a.Tools)
	if err != nil {
		return "", err
	}
	model := metaModel
	if a.Model != "" {
		if err := toolname.CheckModel(a.Model); err != nil {
			return "", &refusal.Refusal{Reason: "start_subagent's model: " + err.Error(),
				Hint: "name a model as the agent's [model] allow names it"}
		}
		if !caps.SubagentModelAllowed(s.Parent.Models, s.Parent.Model, a.Model) {
			return "", &refusal.Refusal{Reason: fmt.Sprintf("model %q is neither the agent's own (%s) nor one its [model] allow names: a subagent runs only on one of those", a.Model, orNone(s.Parent.Model)),
				Hint: "add it to [model] allow in the agent's Config/sandbox.toml"}
		}
		model = a.Model
	}
	// The task is a hop on and its answer, told to this conversation,
	// one more: a start whose answer the cap would refuse is refused
	// itself, so a subagent never runs without a way back.
	hops := c.hops + 1
	if hops+1 > s.Limits.Hops {
		return "", &refusal.Refusal{Reason: fmt.Sprintf("this turn is at hop %d: the subagent's task would be hop %d and its answer hop %d, past the agent's cap ([tool.scheduler] hops = %d)", c.hops, hops, hops+1, s.Limits.Hops),
			Hint: "raise [tool.scheduler] hops in the agent's Config/sandbox.toml"}
	}
	all, err := s.Store.List()
	if err != nil {
		return "", err
	}
	waiting := 0
	for _, j := range all {
		if j.Task != nil && !j.started() {
			waiting++
		}
	}
	if waiting >= s.Limits.Subagents {
		return "", &refusal.Refusal{Reason: fmt.Sprintf("%d subagents are waiting to start, the most at once ([tool.scheduler] subagents = %d)", waiting, s.Limits.Subagents),
			Hint: "raise [tool.scheduler] subagents in the agent's Config/sandbox.toml, or wait for one to end"}
	}
	now := s.now().UTC().Truncate(time.Second)
	j := &Job{ID: newID(), Thread: c.thread, Hops: hops, Text: a.Task, At: now, Next: now, Created: now, Task: &Task{Tools: tools, Model: model}}
	if err := s.Store.Write(j); err != nil {
		return "", err
	}
	on := model
	if on == "" {
		on = "the agent's own model"
	}
	names := "none"
	if len(tools) > 0 {
		names = strings.Join(tools, ", ")
	}
	return fmt.Sprintf("started subagent %s (tools: %s; model: %s): it begins within seconds in its own conversation %s, and its answer will come here as a message from %s",
		Subagent(j.ID), names, on, Subagent(j.ID), Subagent(j.ID)), nil
}

// narrow is the subagent's tools: the parent's, or those of them the
// call names (a tool's granted name, or Link's own by its short name:
// run for run-<agent id>). A name the parent lacks is refused: a
// subagent never has more than its parent. A name that breaks the rule
// of a tool's name (internal/toolname) is refused where the call names
// it, and left out of the parent's list: Link Harness never offers it,
// and its endpoint would refuse the start that named it.
func (s *Server) narrow(parent []string, asked *[]string) ([]string, error) {
	out := []string{}
	if asked == nil {
		for _, p := range parent {
			if toolname.CheckTool(p) == nil && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out, nil
	}
	for _, n := range *asked {
		if err := toolname.CheckTool(n); err != nil {
			return nil, &refusal.Refusal{Reason: "start_subagent's tools: " + err.Error() + ": Link Harness never offers it, so no subagent is started with it",
				Hint: "name the tools as this conversation has them (letters, digits, - and _)"}
		}
		found := ""
		for _, p := range parent {
			if p == n || (s.Parent.AgentID != "" && p == n+"-"+s.Parent.AgentID) {
				found = p
				break
			}
		}
		if found == "" {
			return nil, &refusal.Refusal{Reason: fmt.Sprintf("tool %q is not among this conversation's tools (%s): a subagent has its parent's tools or fewer, never more", n, strings.Join(parent, ", ")),
				Hint: "a subagent gets only what its parent conversation has; lnk agent allow AGENT --tool " + n + " grants the agent a tool"}
		}
		if !slices.Contains(out, found) {
			out = append(out, found)
		}
	}
	slices.Sort(out)
	return out, nil
}

// orNone is name, or "none known" for "".
func orNone(name string) string {
	if name == "" {
		return "none known"
	}
	return name
}
