package model

import "encoding/json"

// Anthropic messages' request: the fields here are all among those the
// sandbox's proxy passes for POST /v1/messages.

// anthropicVersion is the API version sent in anthropic-version.
const anthropicVersion = "2023-06-01"

type anRequest struct {
	Model     string      `json:"model"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	MaxTokens int         `json:"max_tokens"`
	Stream    bool        `json:"stream"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

// anBlock is a content block sent: text, tool_use or tool_result.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// anthropicBody is req in Anthropic's format: the system prompt in
// system; a tool's answer a tool_result block in a user message; the
// messages of one role in a row joined into one, as a tool_result must
// follow its tool_use at once; an empty text block, which the API
// refuses, left out.
func anthropicBody(req Request, model string, stream bool) ([]byte, error) {
	r := anRequest{Model: model, System: req.System, MaxTokens: req.MaxTokens, Stream: stream}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	for _, m := range req.Messages {
		var role string
		var blocks []anBlock
		switch m.Role {
		case User:
			role = "user"
			if m.Text != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Text})
			}
		case Assistant:
			role = "assistant"
			if m.Text != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Text})
			}
			for _, c := range m.ToolCalls {
				in := c.Arguments
				if len(in) == 0 {
					in = json.RawMessage("{}")
				}
				blocks = append(blocks, anBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: in})
			}
		case ToolRole:
			role = "user"
			text := m.Text
			blocks = append(blocks, anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &text})
		default:
			return nil, &Error{Kind: KindBadRequest, Message: "a message of role " + string(m.Role) + ", which no provider takes"}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
			continue
		}
		r.Messages = append(r.Messages, anMessage{Role: role, Content: blocks})
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		r.Tools = append(r.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return json.Marshal(r)
}
