package turn

import (
	"context"
	"errors"
	"fmt"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/harness/tools"
)

// turn is one turn's state.
type turn struct {
	r      *Runner
	conv   *store.Conversation
	thread string
	in     Incoming
	onText func(string)
	system string
	tools  *tools.Turn // nil: no tools

	calls int
}

// append writes e to the log now, stamped with the time.
func (t *turn) append(e *store.Event) (int64, error) {
	if e.Time.IsZero() {
		e.Time = t.r.c.Now().UTC()
	}
	seq, err := t.conv.Append(e)
	if err != nil {
		return 0, fmt.Errorf("turn: writing the conversation's log: %w", err)
	}
	e.Seq = seq
	return seq, nil
}

// offers are the turn's offers ("" none).
func (t *turn) offers() []model.Tool {
	if t.tools == nil {
		return nil
	}
	return t.tools.Offers()
}

// run is the rounds: call the model, make its calls, again, until it
// answers in words or the rounds are spent.
func (t *turn) run(ctx context.Context) (Answer, error) {
	lim := t.r.c.Limits
	offers := t.offers()
	w, err := t.window(ctx)
	if err != nil {
		return Answer{}, err
	}
	rounds := 0
	shrunk := false // the window was summarized after the model said it can't hold it
	for {
		last := rounds == lim.Rounds
		req := model.Request{Model: t.r.c.ModelName, System: w.system(t.system), MaxTokens: t.r.c.MaxTokens}
		if !last && len(offers) > 0 {
			req.Tools = offers
		}
		if last && len(offers) > 0 {
			req.System += fmt.Sprintf("\n\nThis turn made its %d rounds of calls: no more calls; answer in words.", lim.Rounds)
		}
		req.Messages = w.msgs(req.Tools != nil)
		resp, err := t.r.c.Model.Complete(ctx, req, t.onText)
		var me *model.Error
		if err != nil && !shrunk && errors.As(err, &me) && me.Kind == model.KindContextLength {
			// The model can't hold what Link's estimate let through: the
			// window is summarized once, as if past the estimate, and sent
			// again.
			shrunk = true
			t.r.c.Logf("turn %s: the model can't hold the window: summarized and sent again", t.thread)
			if err := t.summarize(ctx, w, true); err != nil {
				return Answer{}, err
			}
			continue
		}
		if err != nil {
			t.r.c.Logf("turn %s: the model failed: %v", t.thread, err)
			return Answer{}, fmt.Errorf("turn: the model: %w", err)
		}
		calls := resp.ToolCalls
		if len(calls) > 0 && req.Tools == nil {
			t.r.c.Logf("turn %s: %d calls dropped: no tool is offered now (%s)", t.thread, len(calls), whyNoTools(last))
			calls = nil
		}
		var dropped int
		if len(calls) > lim.CallsPerRound {
			dropped = len(calls) - lim.CallsPerRound
			calls = calls[:lim.CallsPerRound]
			t.r.c.Logf("turn %s: %d calls dropped: a round makes at most %d", t.thread, dropped, lim.CallsPerRound)
		}
		calls = callIDs(calls, w.events[len(w.events)-1].Seq)
		first := w.first()
		ev := &store.Event{Kind: kindAnswer, Text: resp.Text, Model: t.r.c.ModelName,
			Tokens: &store.Tokens{Input: resp.Usage.InputTokens, Output: resp.Usage.OutputTokens},
			Window: &store.Window{Seq: first.Seq, Time: first.Time, Tokens: model.EstimateTokens(req)}}
		for _, c := range calls {
			ev.Calls = append(ev.Calls, store.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		seq, err := t.append(ev)
		if err != nil {
			return Answer{}, err
		}
		w.add(*ev)
		if len(calls) == 0 {
			return Answer{Text: resp.Text, Seq: seq, Rounds: rounds, Calls: t.calls}, nil
		}
		for i, c := range calls {
			text, from := t.call(ctx, c, nil)
			if i == len(calls)-1 && dropped > 0 {
				text += fmt.Sprintf("\n[Link Harness: %d more calls of this round were dropped, not made: a round makes at most %d]", dropped, lim.CallsPerRound)
			}
			if err := t.result(c, text, from, w); err != nil {
				return Answer{}, err
			}
		}
		rounds++
	}
}

func whyNoTools(last bool) string {
	if last {
		return "the turn's rounds of calls are spent"
	}
	return "this turn offers none"
}

// call makes one call and is its answer as the model will read it, cut
// to AnswerBytes (and said). only, if not nil, is the one name that may
// be called now: any other is refused, sent nowhere.
func (t *turn) call(ctx context.Context, c model.ToolCall, only map[string]bool) (text, from string) {
	t.calls++
	var res tools.Result
	switch {
	case only != nil && !only[c.Name]:
		t.r.c.Logf("turn %s: call %q refused: while notes are saved only memory__remember may be called", t.thread, c.Name)
		res = tools.Result{IsError: true, Text: "refused: while your notes are saved before a summary, only memory__remember may be called"}
	case t.tools == nil:
		res = tools.Result{IsError: true, Text: fmt.Sprintf("no tool call %q is offered in this turn: nothing was called", c.Name)}
	default:
		res = t.tools.Call(ctx, c)
		if !res.Sent {
			t.r.c.Logf("turn %s: call %q not made: %s", t.thread, c.Name, res.Text)
		}
	}
	from = harnessFrom // what no tool answered is the harness's words
	if res.Sent && res.Tool != "" {
		from = res.Tool
	}
	text = res.Text
	if res.IsError {
		text = "[error] " + text
	}
	if kept, was := cut(text, t.r.c.Limits.AnswerBytes); was {
		t.r.c.Logf("turn %s: the answer to %s cut: %d bytes, %d kept", t.thread, c.Name, len(text), len(kept))
		text = kept + fmt.Sprintf("\n[Link Harness: the answer was cut here: %d bytes, of which %d are kept]", len(text), len(kept))
	}
	return text, from
}

// result appends a call's answer to the log and the window, as the
// words of from: the tool that answered, or the harness.
func (t *turn) result(c model.ToolCall, text, from string, w *window) error {
	ev := &store.Event{Kind: kindToolResult, From: from, CallID: c.ID, Text: text}
	if _, err := t.append(ev); err != nil {
		return err
	}
	w.add(*ev)
	return nil
}

// callIDs gives each call an id a provider takes back: the model's own
// when it is letters, digits, - and _ of at most 64 bytes and not one
// before it in the round; else one made from the log's last number and
// the call's place, so no answer can be taken for another call's.
func callIDs(calls []model.ToolCall, last int64) []model.ToolCall {
	seen := map[string]bool{}
	out := make([]model.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" || len(c.ID) > 64 || seen[c.ID] || !idChars(c.ID) {
			c.ID = fmt.Sprintf("lnk_%d_%d", last, i)
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

func idChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
