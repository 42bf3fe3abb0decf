package model

import (
	"context"
	"errors"
	"sync"
	"time"
)

// FallbackOptions are [WithFallback]'s bounds; a zero field is the
// spec's.
type FallbackOptions struct {
	Silence time.Duration // 60 s: nothing streamed back for this long
	Skip    time.Duration // 3 min: the primary skipped after a fallback
	Now     func() time.Time
	// Logf, if not nil, is told each time the fallback is taken, and
	// why, once.
	Logf func(format string, args ...any)
}

// The spec's fallback bounds.
const (
	DefaultFallbackSilence = 60 * time.Second
	DefaultSkip            = 3 * time.Minute
)

// WithFallback sends to primary (a model on this computer) and, when it
// is off, silent past Silence, or can't hold the prompt, sends the whole
// request to fallback, then skips primary for Skip, sending every
// request to fallback meanwhile.
//
// The request the fallback gets is the primary's whole, its Model left
// to the fallback's endpoint (another provider's names differ). An
// answer the primary already began streaming is never joined to the
// fallback's: a primary silent after its first words fails the answer
// with its silent Error, and is skipped all the same. The silence bound
// reaches primary through the request's context, which clients made by
// [New] read; another Client is judged on the Errors it returns.
func WithFallback(primary, fallback Client, o FallbackOptions) Client {
	if o.Silence <= 0 {
		o.Silence = DefaultFallbackSilence
	}
	if o.Skip <= 0 {
		o.Skip = DefaultSkip
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &fallbackClient{primary: primary, fallback: fallback, o: o}
}

type fallbackClient struct {
	primary, fallback Client
	o                 FallbackOptions

	mu        sync.Mutex
	skipUntil time.Time // guarded by mu
}

func (f *fallbackClient) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	if f.skipping() {
		return f.toFallback(ctx, req, onText)
	}
	streamed := false
	tee := func(s string) {
		streamed = true
		if onText != nil {
			onText(s)
		}
	}
	resp, err := f.primary.Complete(withSilence(ctx, f.o.Silence), req, tee)
	why := fallbackReason(err)
	if why == "" {
		return resp, err
	}
	f.skip()
	if streamed {
		return resp, err
	}
	if f.o.Logf != nil {
		f.o.Logf("model: %s; the conversation goes to the fallback, and the local model is skipped for %s", why, f.o.Skip)
	}
	return f.toFallback(ctx, req, onText)
}

func (f *fallbackClient) toFallback(ctx context.Context, req Request, onText func(string)) (Response, error) {
	req.Model = ""
	return f.fallback.Complete(ctx, req, onText)
}

// fallbackReason says why err sends the request to the fallback, the
// spec's three cases; "" for any other error, which is the answer's.
func fallbackReason(err error) string {
	var me *Error
	if !errors.As(err, &me) {
		return ""
	}
	switch me.Kind {
	case KindOff:
		return "the local model is off (" + me.Message + ")"
	case KindSilent:
		return "the local model " + me.Message
	case KindContextLength, KindTooLarge:
		return "the local model can't hold the prompt (" + me.Message + ")"
	}
	return ""
}

func (f *fallbackClient) skipping() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.o.Now().Before(f.skipUntil)
}

func (f *fallbackClient) skip() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skipUntil = f.o.Now().Add(f.o.Skip)
}
