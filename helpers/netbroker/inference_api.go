package netbroker

// The inference APIs the proxy passes, as data: for each call, the
// request's top-level fields passed on to the provider; the fields that
// make the provider reach the internet for the agent, refused with why;
// the fields removed whole (the provider's MCP servers). Any other
// top-level field is dropped before the request leaves: dropping can
// only narrow what the provider does, never widen it, and a harness that
// sends a field newer than this list keeps working without it, where a
// refusal would stop the agent (the log line counts what was dropped).
// A field known to make the provider search or fetch is refused, never
// silently dropped, so the agent is told why its search didn't happen.
//
// One OpenAI-shaped API is spoken by many providers (OpenAI, xAI,
// OpenRouter, Groq, a local Ollama or vLLM): its list is OpenAI's, and a
// provider's own extension is dropped, or refused where it searches.

// inferenceAPI is one inference call's request fields.
type inferenceAPI struct {
	// Fields are passed on as they are (tools are filtered, below).
	Fields []string
	// Removed are taken out whole and counted with the provider's tools.
	Removed []string
	// NoBody marks a call that carries none (a GET).
	NoBody bool
	// Multipart marks a call whose body is a form (a file's bytes), not
	// JSON: it passes as it is; no field of it makes the provider fetch.
	Multipart bool
}

var anthropicMessages = []string{"model", "messages", "max_tokens", "system", "metadata", "stop_sequences",
	"stream", "temperature", "top_k", "top_p", "tools", "tool_choice", "thinking", "service_tier",
	"context_management", "output_format"}

var openAIChat = []string{"model", "messages", "audio", "frequency_penalty", "function_call", "functions",
	"logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n",
	"parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_retention",
	"reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store",
	"stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
	"verbosity",
	// Sampling fields OpenAI-compatible servers (vLLM, llama.cpp,
	// Ollama) take; none reaches the internet.
	"top_k", "min_p", "repetition_penalty"}

// inferenceAPIs are the inference calls, by "METHOD /path": the only
// calls a model's key, or a local model, is used for. Files, batches,
// the account and a local runtime's admin API (pull, push, delete,
// create, copy) are refused.
var inferenceAPIs = map[string]inferenceAPI{
	// Anthropic.
	"POST /v1/messages": {Fields: anthropicMessages, Removed: []string{"mcp_servers"}},
	"POST /v1/messages/count_tokens": {Fields: []string{"model", "messages", "system", "tools", "tool_choice",
		"thinking", "context_management", "output_format"}, Removed: []string{"mcp_servers"}},
	// OpenAI and the providers that speak its API.
	"POST /v1/chat/completions": {Fields: openAIChat},
	"POST /v1/completions": {Fields: []string{"model", "prompt", "best_of", "echo", "frequency_penalty",
		"logit_bias", "logprobs", "max_tokens", "n", "presence_penalty", "seed", "stop", "stream",
		"stream_options", "suffix", "temperature", "top_p", "user"}},
	"POST /v1/responses": {Fields: []string{"model", "input", "instructions", "tools", "tool_choice",
		"parallel_tool_calls", "max_output_tokens", "max_tool_calls", "metadata", "previous_response_id",
		"conversation", "reasoning", "store", "stream", "stream_options", "temperature", "top_p",
		"top_logprobs", "text", "truncation", "user", "safety_identifier", "prompt_cache_key",
		"prompt_cache_retention", "service_tier", "include", "background"}},
	"POST /v1/embeddings":           {Fields: []string{"model", "input", "dimensions", "encoding_format", "user"}},
	"POST /v1/audio/transcriptions": {Multipart: true},
	"GET /v1/models":                {NoBody: true},
	// Ollama's own API (a local model).
	"POST /api/chat": {Fields: []string{"model", "messages", "tools", "format", "options", "stream", "keep_alive", "think"}},
	"POST /api/generate": {Fields: []string{"model", "prompt", "suffix", "images", "format", "options", "system",
		"template", "stream", "raw", "keep_alive", "context", "think"}},
	"POST /api/embed":      {Fields: []string{"model", "input", "truncate", "options", "keep_alive", "dimensions"}},
	"POST /api/embeddings": {Fields: []string{"model", "prompt", "options", "keep_alive"}},
	"POST /api/show":       {Fields: []string{"model", "name", "verbose"}},
	"GET /api/tags":        {NoBody: true},
	"GET /api/version":     {NoBody: true},
}

// searchFields make the provider search the web or fetch for the agent,
// in whichever API they come: a request holding one is refused.
var searchFields = map[string]string{
	"web_search_options":       "OpenAI's web search",
	"search_parameters":        "xAI's live search",
	"plugins":                  "OpenRouter's plugins (web search, fetching files)",
	"search_domain_filter":     "Perplexity's web search",
	"search_recency_filter":    "Perplexity's web search",
	"search_mode":              "Perplexity's web search",
	"return_images":            "Perplexity's web search",
	"return_related_questions": "Perplexity's web search",
}

// responsesSearchFields are searchFields for one API alone, where the
// name means something else elsewhere ("prompt" is a completion's text).
var responsesSearchFields = map[string]string{
	"prompt": "a prompt stored at the provider, which may carry its own tools (web search, MCP servers)",
}

// searchModel is a kind of model name that searches the web on its own,
// whatever the request says: matched on the lower-cased name, and on the
// part after a router's "provider/" prefix.
type searchModel struct {
	Prefix, Contains, Suffix string
	Why                      string
}

var searchModels = []searchModel{
	{Contains: "search-preview", Why: "OpenAI's search models search the web on every call"},
	{Contains: "search-api", Why: "OpenAI's search models search the web on every call"},
	{Contains: "deep-research", Why: "deep research models search the web on their own"},
	{Prefix: "sonar", Why: "Perplexity's Sonar models search the web on every call"},
	{Prefix: "compound", Why: "Groq's Compound systems search the web and run code on their own"},
	{Suffix: ":online", Why: "OpenRouter's :online models search the web on every call"},
}

// clientToolTypes are the tool types the agent runs itself (the
// provider only asks for a call): every other type is one the provider
// runs on its own servers (web search, web fetch, code execution, MCP,
// file search, …), or one this list doesn't know, and is removed.
var clientToolTypes = struct{ Exact, Prefix []string }{
	Exact: []string{"", "function", "custom", "local_shell", "shell", "apply_patch"},
	// Anthropic's client tools, versioned (bash_20250124, …).
	Prefix: []string{"bash_", "text_editor_", "memory_"},
}
