package model

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"
)

// client speaks one endpoint's wire format.
type client struct {
	e     Endpoint
	url   string // the call's whole URL
	hc    *http.Client
	clean cleaner
	clock clock
}

// Complete sends req and reads the answer, streamed unless the endpoint
// says NoStream.
func (c *client) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	model := req.Model
	if model == "" {
		model = c.e.Model
	}
	if model == "" {
		return Response{}, &Error{Kind: KindBadRequest, Message: "no model named"}
	}
	stream := !c.e.NoStream
	var body []byte
	var err error
	if c.e.Format == FormatAnthropic {
		body, err = anthropicBody(req, model, stream)
	} else {
		body, err = openAIBody(req, model, stream)
	}
	if err != nil {
		var me *Error
		if errors.As(err, &me) {
			return Response{}, me
		}
		return Response{}, &Error{Kind: KindBadRequest, Message: "the request can't be written as JSON (a tool's schema?)"}
	}

	silence := c.e.Silence
	if s, ok := ctx.Value(silenceKey{}).(time.Duration); ok && s > 0 {
		silence = s
	}
	if silence <= 0 {
		silence = DefaultSilence
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dog := c.clock.afterFunc(silence, func() { cancel(errSilent) })
	defer dog.Stop()

	hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Response{}, &Error{Kind: KindBadRequest, Message: "the request can't be made"}
	}
	c.headers(hreq.Header, stream)
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return Response{}, c.failed(ctx, rctx, err)
	}
	defer resp.Body.Close()
	dog.Reset(silence)
	if resp.StatusCode != http.StatusOK {
		return Response{}, statusError(resp, c.clean, c.clock.now())
	}
	r := &answerReader{r: resp.Body, left: MaxAnswer, reset: func() { dog.Reset(silence) }}
	out, err := c.read(resp, r, onText)
	if err == nil && r.left < 0 {
		// The byte past the bound may end the last event, buffered
		// before the reader's error is seen: an answer past the bound
		// is refused however it ends.
		err = errAnswerTooLarge
	}
	if err != nil {
		return Response{}, c.failed(ctx, rctx, err)
	}
	return out, nil
}

// headers sets the provider's own: the key in Authorization: Bearer
// (OpenAI) or x-api-key with anthropic-version (Anthropic), never
// elsewhere; and identity encoding, as the sandbox's proxy reads a
// sealed key's answer only whole.
func (c *client) headers(h http.Header, stream bool) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept-Encoding", "identity")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if c.e.Format == FormatAnthropic {
		h.Set("anthropic-version", anthropicVersion)
		if c.e.Key != "" {
			h.Set("x-api-key", c.e.Key)
		}
		return
	}
	if c.e.Key != "" {
		h.Set("Authorization", "Bearer "+c.e.Key)
	}
}

// read reads a 200 answer: a stream when it says text/event-stream,
// else the whole answer as JSON (a server that answers a stream's
// request whole is read the same).
func (c *client) read(resp *http.Response, r io.Reader, onText func(string)) (Response, error) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		if c.e.Format == FormatAnthropic {
			return readAnthropicStream(r, c.clean, onText)
		}
		return readOpenAIStream(r, c.clean, onText)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return Response{}, err
	}
	var out Response
	if c.e.Format == FormatAnthropic {
		out, err = parseAnthropicWhole(body)
	} else {
		out, err = parseOpenAIWhole(body)
	}
	if err != nil {
		if pe, ok := parseProviderError(body); ok {
			return Response{}, streamError(pe, c.clean)
		}
		return Response{}, err
	}
	if onText != nil && out.Text != "" {
		onText(out.Text)
	}
	return out, nil
}

// readOpenAIStream reads a chat completions stream to its end.
func readOpenAIStream(r io.Reader, cl cleaner, onText func(string)) (Response, error) {
	sr, st := newSSEReader(r), newOpenAIStream(cl, onText)
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return st.Finish()
		}
		if err != nil {
			return Response{}, err
		}
		done, err := st.Event(ev.Data)
		if err != nil {
			return Response{}, err
		}
		if done {
			return st.Finish()
		}
	}
}

// readAnthropicStream reads a messages stream to message_stop.
func readAnthropicStream(r io.Reader, cl cleaner, onText func(string)) (Response, error) {
	sr, st := newSSEReader(r), newAnthropicStream(cl, onText)
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return st.Finish()
		}
		if err != nil {
			return Response{}, err
		}
		done, err := st.Event(ev.Name, ev.Data)
		if err != nil {
			return Response{}, err
		}
		if done {
			return st.Finish()
		}
	}
}
