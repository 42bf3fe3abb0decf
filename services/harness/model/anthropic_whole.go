package model

import "encoding/json"

// anMessageWhole is a message answered whole.
type anMessageWhole struct {
	Type       string      `json:"type"`
	Content    []anBlockIn `json:"content"`
	StopReason *string     `json:"stop_reason"`
	Usage      anUsage     `json:"usage"`
}

// parseAnthropicWhole reads a message answered whole.
func parseAnthropicWhole(body []byte) (Response, error) {
	var m anMessageWhole
	if err := json.Unmarshal(body, &m); err != nil || m.Type != "message" {
		return Response{}, badResponse("the answer is not a message's JSON")
	}
	if m.StopReason == nil {
		return Response{}, badResponse("the message has no stop reason")
	}
	if len(m.Content) > maxCalls*2 {
		return Response{}, badResponse("an answer with over %d content blocks", maxCalls*2)
	}
	text := ""
	var calls []ToolCall
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text += b.Text
		case "tool_use":
			calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
		}
	}
	return anthropicResponse(text, calls, *m.StopReason, Usage{InputTokens: m.Usage.input(), OutputTokens: m.Usage.OutputTokens})
}
