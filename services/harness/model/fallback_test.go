package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// messagesSent is the chat completions request a server was sent.
func messagesSent(t *testing.T, s seen) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFallback: the spec's three cases send the whole conversation to
// the fallback (a model off, one silent for 60 s, one that can't hold
// the prompt), and the local model is then skipped for 3 minutes, its
// turns going to the fallback; after them it is asked again. Any other
// error of the local model is the answer's, and the fallback is not
// asked.
func TestFallback(t *testing.T) {
	hosted := func(t *testing.T) *provider { return newProvider(t, loadRecorded(t, "anthropic/stream_text.http")) }
	want := "Your note is in work/todo.md."

	t.Run("off", func(t *testing.T) {
		fc := newFakeClock()
		fb := hosted(t)
		local := mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: "http://" + closedPort(t) + "/v1", Model: "llama3.1:8b"})
		var logged []string
		logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
		c := WithFallback(local, mustNew(t, endpointFor(fb, FormatAnthropic)), FallbackOptions{Now: fc.Now, Logf: logf})
		req := aRequest()
		req.Model = "llama3.1:8b"
		got, err := c.Complete(context.Background(), req, nil)
		if err != nil || got.Text != want {
			t.Fatalf("got %+v, %v", got, err)
		}
		if len(logged) != 1 || !strings.Contains(logged[0], "is off") || !strings.Contains(logged[0], "3m0s") {
			t.Errorf("logged %q, want one line saying why and for how long", logged)
		}
		sent := messagesSent(t, fb.requests()[0])
		if sent["model"] != "test-model" || sent["system"] != req.System {
			t.Errorf("the fallback got model %v system %v", sent["model"], sent["system"])
		}
		// The whole conversation: user, assistant's call, the tool's
		// answer with the user's next words (one user message), all there.
		msgs := sent["messages"].([]any)
		if len(msgs) != 3 {
			t.Fatalf("the fallback got %d messages: %v", len(msgs), msgs)
		}
		if tools := sent["tools"].([]any); len(tools) != 1 {
			t.Errorf("the fallback got %d tools", len(tools))
		}
	})

	t.Run("prompt too long, then skipped for 3 minutes", func(t *testing.T) {
		fc := newFakeClock()
		local := newProvider(t, loadRecorded(t, "llamacpp/400_context_length.http"), loadRecorded(t, "openai/whole_text.http"))
		fb := hosted(t)
		c := WithFallback(mustNew(t, endpointFor(local, FormatOpenAI)), mustNew(t, endpointFor(fb, FormatAnthropic)), FallbackOptions{Now: fc.Now})
		for i, step := range []struct {
			advance     time.Duration
			local, fall int
			text        string
		}{
			{0, 1, 1, want},                                       // too long: to the fallback
			{time.Minute, 1, 2, want},                             // skipped
			{2*time.Minute - time.Second, 1, 3, want},             // still skipped, at 2:59
			{2 * time.Second, 2, 3, "Done: the note is written."}, // past 3:00, asked again
		} {
			fc.Advance(step.advance)
			got, err := c.Complete(context.Background(), aRequest(), nil)
			if err != nil || got.Text != step.text {
				t.Fatalf("step %d: got %+v, %v", i, got, err)
			}
			if l, f := len(local.requests()), len(fb.requests()); l != step.local || f != step.fall {
				t.Fatalf("step %d: local asked %d times, fallback %d; want %d, %d", i, l, f, step.local, step.fall)
			}
		}
		if !reflect.DeepEqual(messagesSent(t, local.requests()[0])["messages"], messagesSent(t, local.requests()[1])["messages"]) {
			t.Error("the local model was sent another conversation")
		}
	})

	t.Run("silent for 60 s", func(t *testing.T) {
		fc := newFakeClock()
		local := heldStream(t)
		le := endpointFor(local, FormatOpenAI)
		le.Silence = 10 * time.Minute // WithFallback's bound wins
		lc := mustNew(t, le)
		lc.clock = fc.clock()
		// A primary that holds before its first event: nothing streamed.
		local.holdAt = 0
		fb := hosted(t)
		c := WithFallback(lc, mustNew(t, endpointFor(fb, FormatAnthropic)), FallbackOptions{Now: fc.Now})
		done := make(chan error, 1)
		var streamed string
		go func() {
			got, err := c.Complete(context.Background(), aRequest(), func(s string) { streamed += s })
			if err == nil && got.Text != want {
				err = errors.New("wrong answer " + got.Text)
			}
			done <- err
		}()
		tm := fc.waitTimer(t, 1)
		if tm.d != DefaultFallbackSilence {
			t.Errorf("the primary's silence bound is %s, want %s", tm.d, DefaultFallbackSilence)
		}
		tm.fire()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if streamed != want || len(fb.requests()) != 1 {
			t.Errorf("streamed %q; fallback asked %d times", streamed, len(fb.requests()))
		}
	})

	t.Run("silent after its first words", func(t *testing.T) {
		// An answer already streaming is not joined to another's.
		fc := newFakeClock()
		local := heldStream(t)
		lc := mustNew(t, endpointFor(local, FormatOpenAI))
		lc.clock = fc.clock()
		local.holdAt = indexAfterFirstEvent(loadRecorded(t, "openai/stream_text.http").Body) + len(loadRecorded(t, "openai/stream_text.http").Body[indexAfterFirstEvent(loadRecorded(t, "openai/stream_text.http").Body):])/2
		fb := hosted(t)
		c := WithFallback(lc, mustNew(t, endpointFor(fb, FormatAnthropic)), FallbackOptions{Now: fc.Now})
		done := make(chan error, 1)
		go func() {
			_, err := c.Complete(context.Background(), aRequest(), func(string) {})
			done <- err
		}()
		tm := fc.waitTimer(t, 1)
		waitResets(t, fc, tm, 2)
		tm.fire()
		err := <-done
		var me *Error
		if !errors.As(err, &me) || me.Kind != KindSilent {
			t.Fatalf("got %v, want silent", err)
		}
		if n := len(fb.requests()); n != 0 {
			t.Errorf("the fallback was asked %d times", n)
		}
	})

	t.Run("other errors are the answer's", func(t *testing.T) {
		fc := newFakeClock()
		for _, f := range []string{"openai/429_rate_limit.http", "openai/401_auth.http", "openai/400_bad_request.http", "openai/stream_cut.http"} {
			local := newProvider(t, loadRecorded(t, f))
			fb := hosted(t)
			c := WithFallback(mustNew(t, endpointFor(local, FormatOpenAI)), mustNew(t, endpointFor(fb, FormatAnthropic)), FallbackOptions{Now: fc.Now})
			_, err := c.Complete(context.Background(), aRequest(), nil)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: got %v", f, err)
			}
			if n := len(fb.requests()); n != 0 {
				t.Errorf("%s: the fallback was asked", f)
			}
			// And the local model is not skipped.
			c.Complete(context.Background(), aRequest(), nil)
			if n := len(local.requests()); n != 2 {
				t.Errorf("%s: the local model was asked %d times, want 2", f, n)
			}
		}
	})
}
