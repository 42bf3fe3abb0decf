package model

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Role says who wrote a [Message]. "system" is never a Message: the
// system prompt is [Request].System.
type Role string

// The roles of a conversation's messages.
const (
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// ToolCall is one call of a tool the model asks for.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object
}

// Message is one message of the conversation sent to the model.
type Message struct {
	Role       Role
	Text       string
	ToolCalls  []ToolCall // an assistant message's calls
	ToolCallID string     // a tool message: the call it answers
	ToolName   string     // a tool message: the tool's name as offered
}

// Tool is one call the model is offered.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the arguments
}

// Request is one completion asked of the model.
type Request struct {
	Model     string // "" the endpoint's
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int // 0: DefaultMaxTokens
}

// Usage is the token counts the provider gave for an answer.
type Usage struct{ InputTokens, OutputTokens int }

// The stop reasons of a [Response].
const (
	StopEnd       = "end"
	StopToolCalls = "tool_calls"
	StopMaxTokens = "max_tokens"
	StopRefused   = "refused"
)

// Response is the model's whole answer.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	Stop      string // StopEnd, StopToolCalls, StopMaxTokens or StopRefused
}

// Client is one provider's wire format. onText, if not nil, gets each
// text delta as it streams.
type Client interface {
	Complete(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// The wire formats of an [Endpoint].
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
)

// Endpoint is where a model is and how it is spoken to.
type Endpoint struct {
	Format string // "openai" (chat completions: OpenAI, llama.cpp's llama-server, Ollama, vLLM, Link's built-in) or "anthropic" (messages)
	// BaseURL is where the API is: OpenAI-compatible, its root with its
	// version (http://127.0.0.1:11434/v1), /chat/completions added;
	// Anthropic, the host's root or it with /v1, /v1/messages added.
	// Behind the proxy, the http:// URL the proxy takes.
	BaseURL    string
	Key        string // behind the proxy: a placeholder; the proxy adds the real key
	Model      string
	HTTPClient *http.Client // nil: one that uses $HTTP_PROXY as the sandbox sets it
	// Silence is how long the provider may send nothing before the
	// answer ends "silent"; 0: DefaultSilence.
	Silence time.Duration
	// NoStream asks for the answer whole rather than streamed.
	NoStream bool
}

// The bounds of an answer.
const (
	MaxLine          = 1 << 20  // one line of a stream
	MaxAnswer        = 32 << 20 // a whole answer, streamed or not
	DefaultSilence   = 60 * time.Second
	DefaultMaxTokens = 4096
)
