package turn

import (
	"context"
	"errors"
	"fmt"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
)

// remember is the one call the model may make while it saves its notes.
const remember = "memory__remember"

var errNoMessage = errors.New("turn: the conversation's log holds no message")

// The harness's words for the summary's steps.
const (
	notesAsk   = "[Link Harness] The conversation above is leaving your window. Before it is summarized, save to your notes with memory__remember what you need to keep. No other call is allowed now. Answer in words when you are done."
	summaryAsk = "[Link Harness] Write a summary of the conversation above for yourself: what was asked, what was done and found, what is still open. It replaces the conversation in your window. Answer with the summary alone."
)

// summarize puts what leaves the window into a summary: the newest
// messages that fit half the budget stay (from a message on, the one
// this turn took always), the model saves notes (memory__remember only),
// then writes the summary, kept in the log; the window then starts at the
// first message that stayed.
//
// forced (the model said it can't hold the window) keeps the last message
// alone.
func (t *turn) summarize(ctx context.Context, w *window, forced bool) error {
	keep := t.tailStart(w, forced)
	if keep <= w.start {
		t.r.c.Logf("turn %s: the window is past the model's context, and its last message alone is: nothing to summarize", t.thread)
		return nil
	}
	head := &window{events: w.events[:keep], start: w.start, skip: w.skip, summary: w.summary}
	for t.tooBig(head, false, 1) && head.start < keep-1 {
		head.start++ // the oldest of what leaves, past the context even alone, goes unsummarized
	}
	t.r.c.Logf("turn %s: the window is past the model's context: events %d to %d summarized", t.thread, w.events[head.start].Seq, w.events[keep-1].Seq)
	if err := t.saveNotes(ctx, head, w); err != nil {
		return err
	}
	req := model.Request{Model: t.r.c.ModelName, System: head.system(t.system), MaxTokens: t.r.c.MaxTokens,
		Messages: append(head.msgs(false), model.Message{Role: model.User, Text: summaryAsk})}
	resp, err := t.r.c.Model.Complete(ctx, req, nil)
	if err != nil {
		return fmt.Errorf("turn: the model, writing a summary: %w", err)
	}
	first := w.events[keep]
	ev := &store.Event{Kind: kindSummary, Text: resp.Text, Model: t.r.c.ModelName,
		Tokens: &store.Tokens{Input: resp.Usage.InputTokens, Output: resp.Usage.OutputTokens},
		Window: &store.Window{Seq: first.Seq, Time: first.Time, Tokens: model.EstimateTokens(req)}}
	if _, err := t.append(ev); err != nil {
		return err
	}
	w.add(*ev)
	w.start, w.skip, w.summary = keep, notesSpan(w.events), resp.Text
	return nil
}

// tailStart is the index of the first event that stays in the window:
// the earliest message or summary whose events to the end fit half the
// budget (store.WindowStart), never after the last message.
func (t *turn) tailStart(w *window, forced bool) int {
	last := -1
	for k := len(w.events) - 1; k >= w.start; k-- {
		if w.events[k].Kind == kindMessage {
			last = k
			break
		}
	}
	if last < 0 {
		return w.start
	}
	if forced {
		return last
	}
	st := store.WindowStart(w.events[w.start:last+1], func(evs []store.Event) bool {
		return !t.tooBig(&window{events: evs, skip: w.skip}, false, 2)
	})
	return w.start + st.Index
}

// saveNotes lets the model call memory__remember, and nothing else, for
// a few rounds before it summarizes: each call and answer in the log.
func (t *turn) saveNotes(ctx context.Context, head, w *window) error {
	if t.tools == nil || !t.tools.Offered(remember) {
		return nil
	}
	var offer []model.Tool
	for _, o := range t.tools.Offers() {
		if o.Name == remember {
			offer = append(offer, o)
		}
	}
	only := map[string]bool{remember: true}
	msgs := append(head.msgs(false), model.Message{Role: model.User, Text: notesAsk})
	for round := 0; round < t.r.c.Limits.NotesRounds; round++ {
		req := model.Request{Model: t.r.c.ModelName, System: head.system(t.system), Messages: msgs, Tools: offer, MaxTokens: t.r.c.MaxTokens}
		resp, err := t.r.c.Model.Complete(ctx, req, nil)
		if err != nil {
			return fmt.Errorf("turn: the model, saving notes: %w", err)
		}
		calls := resp.ToolCalls
		if len(calls) > t.r.c.Limits.CallsPerRound {
			t.r.c.Logf("turn %s: %d calls dropped: a round makes at most %d", t.thread, len(calls)-t.r.c.Limits.CallsPerRound, t.r.c.Limits.CallsPerRound)
			calls = calls[:t.r.c.Limits.CallsPerRound]
		}
		ev := &store.Event{Kind: kindAnswer, Text: resp.Text, Model: t.r.c.ModelName,
			Tokens: &store.Tokens{Input: resp.Usage.InputTokens, Output: resp.Usage.OutputTokens}}
		for _, c := range calls {
			ev.Calls = append(ev.Calls, store.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		if _, err := t.append(ev); err != nil {
			return err
		}
		w.add(*ev)
		if len(calls) == 0 {
			return nil
		}
		msgs = append(msgs, model.Message{Role: model.Assistant, Text: resp.Text, ToolCalls: calls})
		for _, c := range calls {
			text, from := t.call(ctx, c, only)
			if err := t.result(c, text, from, w); err != nil {
				return err
			}
			msgs = append(msgs, model.Message{Role: model.ToolRole, Text: text, ToolCallID: c.ID, ToolName: c.Name})
		}
	}
	return nil
}
