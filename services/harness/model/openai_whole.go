package model

import "encoding/json"

// oaCompletion is a chat completion answered whole ("chat.completion").
type oaCompletion struct {
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content   *string      `json:"content"`
			Refusal   *string      `json:"refusal"`
			ToolCalls []oaCallPart `json:"tool_calls"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage `json:"usage"`
}

// parseOpenAIWhole reads a chat completion answered whole.
func parseOpenAIWhole(body []byte) (Response, error) {
	var c oaCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		return Response{}, badResponse("the answer is not a chat completion's JSON")
	}
	if len(c.Choices) != 1 || c.Choices[0].Index != 0 {
		return Response{}, badResponse("the answer holds %d choices, not the one asked for", len(c.Choices))
	}
	ch := c.Choices[0]
	if ch.FinishReason == nil || *ch.FinishReason == "" {
		return Response{}, badResponse("the answer has no finish reason")
	}
	text, finish := "", *ch.FinishReason
	if ch.Message.Content != nil {
		text = *ch.Message.Content
	}
	if r := ch.Message.Refusal; r != nil && *r != "" {
		text, finish = text+*r, "refusal"
	}
	var calls []*oaCall
	for i, p := range ch.Message.ToolCalls {
		if i >= maxCalls {
			return Response{}, badResponse("an answer with over %d tool calls", maxCalls)
		}
		a, err := argumentsText(p.Function.Arguments)
		if err != nil {
			return Response{}, err
		}
		calls = append(calls, &oaCall{call: ToolCall{ID: p.ID, Name: p.Function.Name}, args: a})
	}
	var u Usage
	if c.Usage != nil {
		u = Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	return openAIResponse(text, calls, finish, u)
}
