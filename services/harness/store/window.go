package store

import "sort"

// Start is where a model's window starts in a conversation's events.
type Start struct {
	Index  int    // events[Index:] is the window
	Window Window // the first event's number and time (the caller adds Tokens)
	Anew   bool   // the latest answer's window did not fit and was made anew
	Fits   bool   // false: not even the last start a window may take fits
}

// WindowStart returns where the model's window starts for the next
// request on events (a conversation's, in order). fits reports whether
// a window of those events fits the model; it must hold for every
// shorter tail of a window it holds for.
//
// The start the latest answer recorded is kept when it still fits the
// messages it names: an event with its number and time is there, it is
// one a window may start at (a message or a summary, never a tool's
// answer cut from its call, nor an answer cut from what it answers),
// and the events from there fit. Otherwise the start is made anew from
// the events: the earliest such event from which the rest fits. With
// no answer recorded yet, the start is made the same way (Anew false).
func WindowStart(events []Event, fits func(window []Event) bool) Start {
	if len(events) == 0 {
		return Start{Fits: true}
	}
	recorded := false
	for i := len(events) - 1; i >= 0; i-- {
		w := events[i].Window
		if events[i].Kind != KindAnswer || w == nil {
			continue
		}
		recorded = true
		if j, ok := named(events, w); ok && fits(events[j:]) {
			return at(events, j, false, true)
		}
		break
	}
	var starts []int
	for i := range events {
		if canStart(events[i].Kind) {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return at(events, 0, recorded, fits(events))
	}
	// The earliest start whose tail fits: fits holds for every later one
	// once it holds for one.
	k := sort.Search(len(starts), func(k int) bool { return fits(events[starts[k]:]) })
	if k == len(starts) {
		return at(events, starts[len(starts)-1], recorded, false)
	}
	return at(events, starts[k], recorded, true)
}

// named finds the event a recorded window names: its number, with the
// time it records, at an event a window may start at.
func named(events []Event, w *Window) (int, bool) {
	j := sort.Search(len(events), func(j int) bool { return events[j].Seq >= w.Seq })
	if j == len(events) || events[j].Seq != w.Seq || !events[j].Time.Equal(w.Time) || !canStart(events[j].Kind) {
		return 0, false
	}
	return j, true
}

func canStart(kind string) bool { return kind == KindMessage || kind == KindSummary }

func at(events []Event, i int, anew, fits bool) Start {
	return Start{Index: i, Window: Window{Seq: events[i].Seq, Time: events[i].Time}, Anew: anew, Fits: fits}
}

// Window returns the events of the model's window for the next request
// and where it starts, by [WindowStart]'s rule (its Index 0: the events
// returned are the window's alone). When
// the latest answer's recorded start can be kept, it reads the log only
// from its end back to that start; otherwise every event.
func (v *Conversation) Window(fits func(window []Event) bool) ([]Event, Start, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, Start{}, ErrClosed
	}
	w, err := v.recordedWindow()
	if err != nil {
		return nil, Start{}, err
	}
	if w != nil && w.Seq > 0 {
		events, err := v.sinceLocked(w.Seq - 1)
		if err != nil {
			return nil, Start{}, err
		}
		if s := WindowStart(events, fits); s.Index == 0 && !s.Anew && s.Fits && len(events) > 0 && events[0].Seq == w.Seq {
			return events, s, nil
		}
	}
	events, err := v.sinceLocked(0)
	if err != nil {
		return nil, Start{}, err
	}
	s := WindowStart(events, fits)
	events, s.Index = events[s.Index:], 0
	return events, s, nil
}
