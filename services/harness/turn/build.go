package turn

import (
	"context"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/prompt"
	"lnk.dev/lnk/services/harness/store"
)

// window is the log as a turn sees it and where the model's window starts.
type window struct {
	events  []store.Event  // the whole log, with what this turn appended
	start   int            // index of the window's first event
	skip    map[int64]bool // notes rounds before a summary: in no window
	summary string         // the latest summary, sent at the window's head
}

// first is the window's first event.
func (w *window) first() store.Event { return w.events[w.start] }

// add appends an event this turn wrote.
func (w *window) add(e store.Event) { w.events = append(w.events, e) }

// msgs are the window's messages; toolsOffered as in messages.
func (w *window) msgs(toolsOffered bool) []model.Message {
	return messages(w.events[w.start:], w.skip, toolsOffered)
}

// system is the system prompt with the summary at its head.
func (w *window) system(base string) string {
	return withSummary(base, w.summary)
}

func withSummary(base, summary string) string {
	if summary == "" {
		return base
	}
	return base + "\n\n## The conversation before this window, in your own words (your summary)\n\n" + prompt.EscapeHeadings(summary)
}

// window reads the log and finds the model's window (store.WindowStart):
// where the last answer recorded it, when that still names an event of
// the log by number and time; else made anew from the log's messages
// since the latest summary. A window past the model's context is
// summarized.
func (t *turn) window(ctx context.Context) (*window, error) {
	events, err := t.conv.Events()
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, errNoMessage
	}
	summary, base := lastSummary(events)
	w := &window{events: events, skip: notesSpan(events), summary: summary}
	st := store.WindowStart(events[base:], func([]store.Event) bool { return true })
	w.start = base + st.Index
	if st.Anew {
		t.r.c.Logf("turn %s: the recorded window doesn't fit the log's messages: made anew from them", t.thread)
	}
	if t.tooBig(w, len(t.offers()) > 0, 1) {
		if err := t.summarize(ctx, w, false); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// budget is how many tokens a request may hold: the model's window less
// room for its answer.
func (t *turn) budget() int {
	b := t.r.c.Window - t.r.c.MaxTokens
	if b <= 0 {
		b = t.r.c.Window / 2
	}
	return b
}

// tooBig reports a window past the budget divided by part (1: the whole
// budget, 2: half), with the turn's offers when toolsOffered.
func (t *turn) tooBig(w *window, toolsOffered bool, part int) bool {
	req := model.Request{System: w.system(t.system), Messages: w.msgs(toolsOffered)}
	if toolsOffered {
		req.Tools = t.offers()
	}
	return model.EstimateTokens(req)*part > t.budget()
}
