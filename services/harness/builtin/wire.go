package builtin

import (
	"encoding/json"
	"net/http"
)

// created is every answer's "created": a fixed time, since the answer
// depends only on the request (2026-01-01T00:00:00Z).
const created = 1767225600

// systemFingerprint names the rules' version.
const systemFingerprint = "fp_lnk_builtin_1"

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type modelList struct {
	Object string       `json:"object"`
	Data   []modelEntry `json:"data"`
}

var builtinModel = modelEntry{ID: ModelName, Object: "model", Created: created, OwnedBy: "link"}

type usage struct {
	PromptTokens            int               `json:"prompt_tokens"`
	CompletionTokens        int               `json:"completion_tokens"`
	TotalTokens             int               `json:"total_tokens"`
	PromptTokensDetails     promptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails completionDetails `json:"completion_tokens_details"`
}

// The details OpenAI gives with usage: none of it applies here, so each
// count is 0.
type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
	AudioTokens  int `json:"audio_tokens"`
}

type completionDetails struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

// completionBody is a whole chat.completion.
type completionBody struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	Choices           []wholeChoice `json:"choices"`
	Usage             usage         `json:"usage"`
	SystemFingerprint string        `json:"system_fingerprint"`
}

type wholeChoice struct {
	Index        int             `json:"index"`
	Message      answerMessage   `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type answerMessage struct {
	Role        string     `json:"role"`
	Content     *string    `json:"content"`
	Refusal     *string    `json:"refusal"`
	ToolCalls   []ToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{} `json:"annotations"`
}

// chunkBody is one chat.completion.chunk.
type chunkBody struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage,omitempty"`
	withUsage         bool
}

// MarshalJSON writes "usage": null on every chunk but the last when the
// request asked for usage, as OpenAI does.
func (c chunkBody) MarshalJSON() ([]byte, error) {
	type plain chunkBody
	if !c.withUsage || c.Usage != nil {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		Usage *usage `json:"usage"`
	}{plain: plain(c)})
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // a JSON string, or null beside calls
	Refusal   json.RawMessage `json:"refusal,omitempty"`
	ToolCalls []deltaCall     `json:"tool_calls,omitempty"`
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

var null = json.RawMessage("null")

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"the answer did not encode","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError writes OpenAI's error body; param and code are null when "".
func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	d := errorDetail{Message: msg, Type: typ}
	if param != "" {
		d.Param = &param
	}
	if code != "" {
		d.Code = &code
	}
	writeJSON(w, status, errorBody{Error: d})
}

// deltaCall is a tool call's piece in a stream: the first carries its id,
// type and name, the rest only more of its arguments.
type deltaCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function deltaFunction `json:"function"`
}

type deltaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}
