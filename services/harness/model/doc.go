// Package model is Link Harness's side of the providers' wire formats:
// OpenAI-compatible chat completions (OpenAI, llama.cpp's llama-server,
// Ollama's /v1, vLLM and Link's built-in model) and Anthropic messages,
// streamed (server-sent events) or not. [New] makes a [Client] for an
// [Endpoint]; [WithFallback] sends to a model on this computer and, when
// it is off, silent or too small for the prompt, to a hosted fallback;
// [WindowTokens] and [EstimateTokens] size a conversation's window.
//
// # Errors
//
// Every failure of a provider's answer is an [*Error] with a Kind the
// turn decides on (rate_limit with its RetryAfter, overloaded,
// context_length, auth, forbidden, not_found, too_large, bad_request,
// server, off, refused, bad_response, cut, silent) and a Message of one
// clean line (internal/textsafe) from the provider's own words, with the
// endpoint's key, and anything shaped like a provider's key, taken out.
//
// # Bounds
//
// A stream is read line by line: a line past [MaxLine] (1 MiB), a whole
// answer past [MaxAnswer] (32 MiB), a stream that ends before its last
// event (cut), one that sends nothing for the silence bound (silent,
// [DefaultSilence]), a chunk or event that is not the provider's shape
// (bad_response), and a tool call whose arguments are not one JSON
// object are each refused with an [*Error]: never a half answer taken
// as whole.
//
// # Security
//
// Holds: the endpoint's key, which behind the sandbox's proxy is only a
// placeholder the proxy replaces outside the sandbox; it is sent only in
// the provider's own header (Authorization: Bearer, or x-api-key with
// anthropic-version) and never written into an error, a log or a URL.
// May: send HTTP requests to the endpoint's base URL, through $HTTP_PROXY
// as the sandbox sets it ([HTTPClient]: http:// to the proxy, which does
// TLS to a hosted model), never following a redirect. Trusts: nothing
// the provider answers; every byte of it is parsed with the bounds above.
// Refuses: a base URL that is not http:// or https://, or carries
// credentials, a query or a fragment; a key sent over http:// off this
// machine's loopback; inside the sandbox, an $HTTP_PROXY that is not an
// http:// proxy (no client is made that would go around it).
package model
