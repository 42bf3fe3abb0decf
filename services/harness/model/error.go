package model

import (
	"fmt"
	"time"
)

// The kinds of [Error].
const (
	KindRateLimit     = "rate_limit"     // 429: RetryAfter says when to try again
	KindOverloaded    = "overloaded"     // 503, Anthropic's 529 and its overloaded_error event
	KindContextLength = "context_length" // the prompt is longer than the model's window
	KindAuth          = "auth"           // 401: the key is wrong or missing
	KindForbidden     = "forbidden"      // 403 from the provider
	KindNotFound      = "not_found"      // 404: no such model or path
	KindTooLarge      = "too_large"      // 413: the request is over the provider's size
	KindBadRequest    = "bad_request"    // another 4xx
	KindServer        = "server"         // 500 and other 5xx
	KindOff           = "off"            // the model's server is not listening
	KindRefused       = "refused"        // the sandbox's proxy refused the request
	KindBadResponse   = "bad_response"   // an answer that is not the provider's format, or past a bound
	KindCut           = "cut"            // the stream ended before its last event
	KindSilent        = "silent"         // nothing came for the silence bound
)

// Error is every failure of a provider's answer.
type Error struct {
	Status     int // HTTP status, 0 for a broken stream or body
	Kind       string
	RetryAfter time.Duration
	Message    string // the provider's words, cleaned, never a key
}

func (e *Error) Error() string {
	s := "model: " + e.Kind
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf("; retry after %s", e.RetryAfter)
	}
	return s
}
