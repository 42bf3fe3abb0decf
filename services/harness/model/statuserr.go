package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxErrorBody is the most of an error's body read.
const maxErrorBody = 64 << 10

// maxRetryAfter bounds a provider's retry-after.
const maxRetryAfter = 24 * time.Hour

// providerError is an error body of either format: OpenAI's
// {"error": {"message", "type", "code"}} (llama-server's adds n_ctx),
// Anthropic's {"type": "error", "error": {"type", "message"}}, and
// Ollama's own {"error": "words"}.
type providerError struct {
	Message string
	Type    string
	Code    string
}

// parseProviderError reads an error body; ok is false for one of
// neither shape.
func parseProviderError(body []byte) (providerError, bool) {
	var outer struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &outer); err != nil || len(outer.Error) == 0 {
		return providerError{}, false
	}
	var words string
	if json.Unmarshal(outer.Error, &words) == nil {
		return providerError{Message: words}, words != ""
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(outer.Error, &inner) != nil {
		return providerError{}, false
	}
	pe := providerError{Message: inner.Message, Type: inner.Type}
	var code string
	if json.Unmarshal(inner.Code, &code) == nil {
		pe.Code = code
	}
	return pe, pe.Message != "" || pe.Type != ""
}

// contextLengthWords are how the providers say a prompt is over the
// model's window: OpenAI's and vLLM's "maximum context length",
// Anthropic's "prompt is too long", llama-server's "exceeds the
// available context size".
var contextLengthWords = []string{"maximum context length", "prompt is too long", "context size", "context window", "context_length_exceeded"}

// isContextLength says whether pe is a prompt over the model's window.
func isContextLength(pe providerError) bool {
	if pe.Code == "context_length_exceeded" || pe.Type == "exceed_context_size_error" {
		return true
	}
	m := strings.ToLower(pe.Message)
	for _, w := range contextLengthWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// kindOfType is the Kind of a provider's error type, where the type
// says more than the status (an error event in a stream has none).
func kindOfType(t string) string {
	switch t {
	case "overloaded_error":
		return KindOverloaded
	case "rate_limit_error", "rate_limit_exceeded":
		return KindRateLimit
	case "authentication_error":
		return KindAuth
	case "permission_error":
		return KindForbidden
	case "not_found_error":
		return KindNotFound
	case "request_too_large":
		return KindTooLarge
	case "invalid_request_error":
		return KindBadRequest
	case "api_error", "server_error", "timeout_error":
		return KindServer
	}
	return ""
}

// kindOfStatus is the Kind of an HTTP status.
func kindOfStatus(status int) string {
	switch {
	case status >= 200 && status < 300:
		return KindBadResponse
	case status == 401:
		return KindAuth
	case status == 403:
		return KindForbidden
	case status == 404:
		return KindNotFound
	case status == 413:
		return KindTooLarge
	case status == 429:
		return KindRateLimit
	case status == 503 || status == 529:
		return KindOverloaded
	case status >= 300 && status < 400:
		return KindBadResponse
	case status >= 400 && status < 500:
		return KindBadRequest
	}
	return KindServer
}

// statusError is the Error of an answer that is not 200: its body read
// (at most maxErrorBody), its words cleaned of the key.
func statusError(resp *http.Response, c cleaner, now time.Time) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Status: resp.StatusCode, Kind: kindOfStatus(resp.StatusCode)}
	if rule := resp.Header.Get("X-Lnk-Refused"); rule != "" {
		// The sandbox's proxy refused: its own words, reason and hint.
		e.Kind = KindRefused
		if rule == "upstream" {
			e.Kind = KindOff
		}
		e.Message = c.clean(strings.ReplaceAll(strings.TrimSpace(string(body)), "\n", "; "))
		return e
	}
	if e.Status >= 300 && e.Status < 400 {
		e.Message = "the provider answered with a redirect, which is never followed"
		return e
	}
	if e.Status < 300 {
		e.Message = fmt.Sprintf("the provider answered with status %d, not 200", e.Status)
		return e
	}
	pe, ok := parseProviderError(body)
	switch {
	case ok:
		// The type refines a status that says little (400, 500) within
		// its class: a client's error stays one (Ollama sends
		// "api_error" with its 400s), a server's stays one.
		switch k := kindOfType(pe.Type); {
		case e.Kind == KindBadRequest && (k == KindAuth || k == KindForbidden || k == KindNotFound || k == KindTooLarge || k == KindRateLimit):
			e.Kind = k
		case e.Kind == KindServer && k == KindOverloaded:
			e.Kind = k
		}
		if isContextLength(pe) {
			e.Kind = KindContextLength
		}
		e.Message = c.clean(pe.Message)
		if e.Message == "" {
			e.Message = c.clean(pe.Type)
		}
	case len(bytes.TrimSpace(body)) > 0 && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("<")):
		e.Message = c.clean(string(body))
	default:
		e.Message = strings.ToLower(http.StatusText(e.Status))
	}
	if e.Kind == KindRateLimit || e.Kind == KindOverloaded {
		e.RetryAfter = retryAfter(resp.Header, now)
	}
	return e
}

// retryAfter reads OpenAI's retry-after-ms, else retry-after in seconds
// or as an HTTP date; 0 when neither is there or readable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < float64(maxRetryAfter/time.Millisecond) {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 && s < maxRetryAfter.Seconds() {
				d = time.Duration(s * float64(time.Second))
			}
		} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
			d = t.Sub(now)
		}
	}
	if d > maxRetryAfter {
		d = maxRetryAfter
	}
	return d
}

// streamError is the Error of an error carried in a stream (Anthropic's
// error event, an OpenAI-compatible server's {"error": …} chunk).
func streamError(pe providerError, c cleaner) *Error {
	e := &Error{Kind: kindOfType(pe.Type), Message: c.clean(pe.Message)}
	if e.Kind == "" {
		e.Kind = KindServer
	}
	if isContextLength(pe) {
		e.Kind = KindContextLength
	}
	if e.Message == "" {
		e.Message = c.clean(pe.Type)
	}
	return e
}
