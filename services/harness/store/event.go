package store

import (
	"encoding/json"
	"time"
)

// The kinds of [Event].
const (
	KindMessage    = "message"     // the owner's (From "") or others'
	KindAnswer     = "answer"      // the agent's answer, its calls in Calls
	KindToolCall   = "tool_call"   // one call the agent made, in Calls
	KindToolResult = "tool_result" // a tool's answer: From the tool, CallID the call
	KindSummary    = "summary"     // the model's own words for what left its window
)

// Event is one line of a conversation's log.
type Event struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	From   string    `json:"from,omitempty"` // "" the owner; else who: "schedule:<id>", "agent-<id>", "run:<id>", a stranger's name; a tool result's tool
	Text   string    `json:"text,omitempty"`
	Calls  []Call    `json:"calls,omitempty"`   // an answer's tool calls
	CallID string    `json:"call_id,omitempty"` // a tool_result's call
	Model  string    `json:"model,omitempty"`
	Tokens *Tokens   `json:"tokens,omitempty"`
	Window *Window   `json:"window,omitempty"` // on answers: where the model's window starts
	Hops   int       `json:"hops,omitempty"`
	Queued int64     `json:"queued,omitempty"` // a message run from the conversation's inbox: its number there
}

// Call is one tool call of an answer.
type Call struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Tokens is what an answer took: the provider's counts and its cost.
type Tokens struct {
	Input  int     `json:"input"`
	Output int     `json:"output"`
	Cost   float64 `json:"cost,omitempty"`
}

// Window is where the model's window started for an answer: the first
// event's number and time, and the tokens the window held.
type Window struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Tokens int       `json:"tokens"`
}
