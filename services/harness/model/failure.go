package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"
)

// errSilent ends a request that nothing came back on for the silence
// bound.
var errSilent = errors.New("silent")

// errAnswerTooLarge is an answer past MaxAnswer.
var errAnswerTooLarge = errors.New("the answer is over 32 MiB")

// silenceKey carries, in a request's context, a silence bound that
// overrides the endpoint's ([WithFallback]'s for its primary).
type silenceKey struct{}

// withSilence gives ctx a silence bound for the request made with it.
func withSilence(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, silenceKey{}, d)
}

// answerReader reads at most left bytes of an answer, calling reset at
// each read that brought some (the silence bound starts again). It
// reads one byte past left, so that an answer of exactly left bytes
// passes and one longer is errAnswerTooLarge.
type answerReader struct {
	r     io.Reader
	left  int64
	reset func()
}

func (a *answerReader) Read(p []byte) (int, error) {
	if a.left < 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > a.left+1 {
		p = p[:a.left+1]
	}
	n, err := a.r.Read(p)
	a.left -= int64(n)
	if n > 0 && a.reset != nil {
		a.reset()
	}
	if a.left < 0 {
		return n, errAnswerTooLarge
	}
	return n, err
}

// failed maps a request's failure to what the caller is told: the
// caller's own cancellation as it is; the silence bound as silent; the
// stream's bounds, its cut and its garbage as Errors of their kinds; a
// request that never reached the model (its server not listening) as
// off. No URL is repeated: a route's path holds the proxy's secret.
func (c *client) failed(ctx, rctx context.Context, err error) error {
	var me *Error
	if errors.As(err, &me) {
		return me
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(rctx), errSilent) {
		return &Error{Kind: KindSilent, Message: fmt.Sprintf("nothing came from the model for %s", c.silenceOf(ctx))}
	}
	switch {
	case errors.Is(err, errLine):
		return &Error{Kind: KindBadResponse, Message: "a line of the stream is over 1 MiB"}
	case errors.Is(err, errAnswerTooLarge):
		return &Error{Kind: KindBadResponse, Message: "the answer is over 32 MiB"}
	case errors.Is(err, errCutEvent):
		return &Error{Kind: KindCut, Message: "the stream ended inside an event"}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		var op *net.OpError
		msg := "the model's server did not answer"
		if errors.As(ue.Err, &op) && op.Op == "dial" {
			msg = "the model's server is not listening"
			if op.Err != nil {
				msg += ": " + c.clean.clean(op.Err.Error())
			}
		}
		return &Error{Kind: KindOff, Message: msg}
	}
	return &Error{Kind: KindCut, Message: "the answer broke off: " + c.clean.clean(err.Error())}
}

func (c *client) silenceOf(ctx context.Context) time.Duration {
	if s, ok := ctx.Value(silenceKey{}).(time.Duration); ok && s > 0 {
		return s
	}
	if c.e.Silence > 0 {
		return c.e.Silence
	}
	return DefaultSilence
}

// timer is what a silence watchdog needs of a *time.Timer.
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// clock is the time a client reads: real but for the package's tests.
type clock struct {
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) timer
}

var realClock = clock{
	now:       time.Now,
	afterFunc: func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) },
}
