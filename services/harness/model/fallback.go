package model

import (
	"context"
	"time"
)

// FallbackOptions are [WithFallback]'s bounds; a zero field is the
// spec's.
type FallbackOptions struct {
	Silence time.Duration // 60 s: nothing streamed back for this long
	Skip    time.Duration // 3 min: the primary skipped after a fallback
	Now     func() time.Time
}

// The spec's fallback bounds.
const (
	DefaultFallbackSilence = 60 * time.Second
	DefaultSkip            = 3 * time.Minute
)

// WithFallback sends to primary (a model on this computer) and, when it
// is off, silent past Silence, or can't hold the prompt, sends the whole
// request to fallback, then skips primary for Skip.
func WithFallback(primary, fallback Client, o FallbackOptions) Client {
	return &fallbackClient{primary: primary, fallback: fallback, o: o}
}

type fallbackClient struct {
	primary, fallback Client
	o                 FallbackOptions
}

func (f *fallbackClient) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return Response{}, &Error{Kind: KindOff, Message: "not built yet"}
}
