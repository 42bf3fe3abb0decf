package model

import (
	"context"
	"errors"
	"testing"
	"time"
)

// heldStream is a stream whose server sends its first event and then
// nothing until the test lets it.
func heldStream(t *testing.T) *provider {
	p := newProvider(t, loadRecorded(t, "openai/stream_text.http"))
	first := loadRecorded(t, "openai/stream_text.http").Body
	p.holdAt = indexAfterFirstEvent(first)
	return p
}

func indexAfterFirstEvent(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\n' && b[i+1] == '\n' {
			return i + 2
		}
	}
	return len(b)
}

// TestSilence: a stream that sends nothing for the silence bound ends
// silent, and the bound starts again at each read; the same stream
// that goes on before the bound is read whole.
func TestSilence(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		fc := newFakeClock()
		p := heldStream(t)
		c := mustNew(t, endpointFor(p, FormatOpenAI))
		c.clock = fc.clock()
		done := make(chan error, 1)
		go func() {
			_, err := c.Complete(context.Background(), aRequest(), nil)
			done <- err
		}()
		tm := fc.waitTimer(t, 1)
		if tm.d != DefaultSilence {
			t.Errorf("the silence bound is %s, want %s", tm.d, DefaultSilence)
		}
		waitResets(t, fc, tm, 1)
		tm.fire()
		err := <-done
		var me *Error
		if !errors.As(err, &me) || me.Kind != KindSilent {
			t.Fatalf("got %v, want silent", err)
		}
	})
	t.Run("goes on", func(t *testing.T) {
		fc := newFakeClock()
		p := heldStream(t)
		c := mustNew(t, endpointFor(p, FormatOpenAI))
		c.clock = fc.clock()
		done := make(chan error, 1)
		go func() {
			_, err := c.Complete(context.Background(), aRequest(), nil)
			done <- err
		}()
		tm := fc.waitTimer(t, 1)
		waitResets(t, fc, tm, 1)
		p.release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("headers start it again", func(t *testing.T) {
		// Headers that come, then nothing: the bound starts again
		// from them.
		fc := newFakeClock()
		p := heldStream(t)
		p.holdAt = 0
		c := mustNew(t, endpointFor(p, FormatOpenAI))
		c.clock = fc.clock()
		done := make(chan error, 1)
		go func() {
			_, err := c.Complete(context.Background(), aRequest(), nil)
			done <- err
		}()
		tm := fc.waitTimer(t, 1)
		waitResets(t, fc, tm, 1)
		tm.fire()
		var me *Error
		if err := <-done; !errors.As(err, &me) || me.Kind != KindSilent {
			t.Fatalf("got %v, want silent", err)
		}
	})
	t.Run("real timer", func(t *testing.T) {
		// The real clock's timer, with a short bound: the wiring
		// that cancels the request, not the fake's.
		p := heldStream(t)
		e := endpointFor(p, FormatOpenAI)
		e.Silence = 50 * time.Millisecond
		_, err := mustNew(t, e).Complete(context.Background(), aRequest(), nil)
		var me *Error
		if !errors.As(err, &me) || me.Kind != KindSilent {
			t.Fatalf("got %v, want silent", err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		// The caller's own cancellation is its error, not silent.
		p := heldStream(t)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		_, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(ctx, aRequest(), nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}

// waitResets waits until the timer was started again n times (the
// answer's headers and first event came).
func waitResets(t *testing.T, fc *fakeClock, tm *fakeTimer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		fc.mu.Lock()
		r := tm.resets
		fc.mu.Unlock()
		if r >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the silence timer was never started again")
}
