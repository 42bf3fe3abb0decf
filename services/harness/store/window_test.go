package store

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// budget is a fits that counts a byte of text as a token.
func budget(n int) func([]Event) bool {
	return func(w []Event) bool {
		sum := 0
		for _, e := range w {
			sum += len(e.Text)
		}
		return sum <= n
	}
}

func minute(min int) time.Time { return time.Date(2026, 12, 7, 9, min, 0, 0, time.UTC) }

// chat is a conversation of events of ten tokens each, numbered from 1,
// the i-th at minute i: m a message, a an answer (w: recording window
// start seq at the time of event w), t a tool's answer, s a summary.
func chat(kinds string, window *Window) []Event {
	var es []Event
	for i, k := range kinds {
		e := Event{Seq: int64(i + 1), Time: minute(i + 1), Text: strings.Repeat("x", 10)}
		e.Kind = map[rune]string{'m': KindMessage, 'a': KindAnswer, 't': KindToolResult, 's': KindSummary}[k]
		es = append(es, e)
	}
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Kind == KindAnswer {
			es[i].Window = window
			break
		}
	}
	return es
}

// TestWindowStartKeepsARecordedWindowThatFitsTheMessagesItNames: the
// latest answer's window is kept while the event it names is there,
// with the time it records, is a message or a summary, and the rest
// fits; otherwise, and with no window recorded, the start is made anew:
// the earliest message or summary from which the rest fits, never a
// tool's answer or an answer cut from what it answers.
func TestWindowStartKeepsARecordedWindowThatFitsTheMessagesItNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kinds  string
		window *Window
		budget int
		index  int
		anew   bool
		fits   bool
	}{
		{"none recorded: from the first", "mama", nil, 100, 0, false, true},
		{"none recorded: the earliest that fits", "mamam", nil, 30, 2, false, true},
		{"kept though an earlier start fits", "mamam", &Window{Seq: 3, Time: minute(3)}, 100, 2, false, true},
		{"its message's time differs: anew", "mamam", &Window{Seq: 3, Time: minute(9)}, 100, 0, true, true},
		{"its number isn't there: anew", "mamam", &Window{Seq: 42, Time: minute(42)}, 100, 0, true, true},
		{"no longer fits: anew, later", "mamamam", &Window{Seq: 1, Time: minute(1)}, 30, 4, true, true},
		{"names a tool's answer: anew", "matam", &Window{Seq: 3, Time: minute(3)}, 100, 0, true, true},
		{"never from a tool's answer or an answer", "matatam", nil, 40, 6, false, true},
		{"from a summary", "mamsam", nil, 30, 3, false, true},
		{"nothing fits", "mam", nil, 5, 2, false, false},
		{"no start at all", "aa", nil, 100, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := chat(tc.kinds, tc.window)
			s := WindowStart(es, budget(tc.budget))
			if s.Index != tc.index || s.Anew != tc.anew || s.Fits != tc.fits {
				t.Fatalf("got %+v, want index %d anew %v fits %v", s, tc.index, tc.anew, tc.fits)
			}
			if s.Window.Seq != es[s.Index].Seq || !s.Window.Time.Equal(es[s.Index].Time) {
				t.Errorf("the window names %+v, not event %d", s.Window, s.Index)
			}
		})
	}
	if s := WindowStart(nil, budget(0)); s.Index != 0 || !s.Fits {
		t.Errorf("no events: %+v", s)
	}
}

// TestConversationWindowIsWindowStartOfEveryEvent: the conversation's
// Window, which reads the log from its end when it can, gives what
// WindowStart gives on every event, as answers record windows that are
// kept, outgrown and made anew, or name a message whose time changed.
func TestConversationWindowIsWindowStartOfEveryEvent(t *testing.T) {
	v, _ := conv(t, "t", Options{})
	fits := budget(60)
	check := func(step string) Start {
		t.Helper()
		got, s, err := v.Window(fits)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		all, _ := v.Events()
		want := WindowStart(all, fits)
		at := want.Index
		want.Index = 0
		if s != want || len(got) != len(all)-at || (len(got) > 0 && got[0].Seq != want.Window.Seq) {
			t.Fatalf("%s: %+v, %d events; want %+v", step, s, len(got), want)
		}
		return s
	}
	check("empty")
	for i := 0; i < 12; i++ {
		says(t, v, strings.Repeat("m", 10))
		s := check(fmt.Sprint("message ", i))
		v.Append(&Event{Kind: KindAnswer, Text: strings.Repeat("a", 10), Window: &Window{Seq: s.Window.Seq, Time: s.Window.Time}})
		check(fmt.Sprint("answer ", i))
	}
	// A window naming a message with another time: made anew.
	all, _ := v.Events()
	v.Append(&Event{Kind: KindAnswer, Window: &Window{Seq: all[len(all)-2].Seq, Time: minute(0)}})
	if s := check("a window naming another time"); !s.Anew {
		t.Errorf("kept: %+v", s)
	}
}
