package store

// Start is where a model's window starts in a conversation's events.
type Start struct {
	Index  int    // events[Index:] is the window
	Window Window // the first event's number and time (the caller adds Tokens)
	Anew   bool   // the latest answer's window did not fit and was made anew
	Fits   bool   // false: not even the window's smallest start fits
}

// WindowStart returns where the model's window starts for the next
// request on events (a conversation's, in order). fits reports whether
// a window of those events fits the model; it must hold for every
// shorter tail of a window it holds for.
//
// The start the latest answer recorded is kept when it still fits the
// messages it names: an event with its number and time is there, it is
// one a window may start at (a message or a summary, never a tool's
// answer cut from its call), and the events from there fit. Otherwise
// the start is made anew from the events: the earliest such event from
// which the rest fits.
func WindowStart(events []Event, fits func(window []Event) bool) Start {
	return Start{}
}
