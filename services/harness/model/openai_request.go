package model

import (
	"encoding/json"
	"strings"
)

// OpenAI chat completions' request: the fields here are all among those
// the sandbox's proxy passes for POST /v1/chat/completions
// (helpers/netbroker's inference list).

type oaRequest struct {
	Model         string        `json:"model"`
	Messages      []oaMessage   `json:"messages"`
	Tools         []oaTool      `json:"tools,omitempty"`
	MaxTokens     int           `json:"max_tokens,omitempty"`
	MaxCompletion int           `json:"max_completion_tokens,omitempty"`
	Stream        bool          `json:"stream"`
	StreamOptions *oaStreamOpts `json:"stream_options,omitempty"`
}

type oaStreamOpts struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role       string      `json:"role"`
	Content    *string     `json:"content"`
	ToolCalls  []oaCallOut `json:"tool_calls,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

type oaCallOut struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function oaFuncCall `json:"function"`
}

type oaFuncCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaTool struct {
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// openAIBody is req in OpenAI's format: the system prompt first, as a
// system message; an assistant's calls with their arguments as JSON
// text; a tool's answer as a tool message naming its call.
func openAIBody(req Request, model string, stream bool) ([]byte, error) {
	r := oaRequest{Model: model, Stream: stream}
	limit := req.MaxTokens
	if limit <= 0 {
		limit = DefaultMaxTokens
	}
	if takesMaxCompletion(model) {
		r.MaxCompletion = limit
	} else {
		r.MaxTokens = limit
	}
	if stream {
		r.StreamOptions = &oaStreamOpts{IncludeUsage: true}
	}
	if req.System != "" {
		s := req.System
		r.Messages = append(r.Messages, oaMessage{Role: "system", Content: &s})
	}
	for _, m := range req.Messages {
		text := m.Text
		out := oaMessage{Role: string(m.Role), Content: &text}
		switch m.Role {
		case Assistant:
			if len(m.ToolCalls) > 0 && text == "" {
				out.Content = nil
			}
			for _, c := range m.ToolCalls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				out.ToolCalls = append(out.ToolCalls, oaCallOut{ID: c.ID, Type: "function", Function: oaFuncCall{Name: c.Name, Arguments: args}})
			}
		case ToolRole:
			out.ToolCallID = m.ToolCallID
		case User:
		default:
			return nil, &Error{Kind: KindBadRequest, Message: "a message of role " + string(m.Role) + ", which no provider takes"}
		}
		r.Messages = append(r.Messages, out)
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		r.Tools = append(r.Tools, oaTool{Type: "function", Function: oaFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	return json.Marshal(r)
}

// takesMaxCompletion says whether model is one of OpenAI's reasoning
// models, which refuse max_tokens and take max_completion_tokens; every
// other server spoken to in this format (llama-server, Ollama, vLLM, the
// built-in) takes max_tokens.
func takesMaxCompletion(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if m == p || strings.HasPrefix(m, p+"-") || strings.HasPrefix(m, p+".") {
			return true
		}
	}
	return false
}
