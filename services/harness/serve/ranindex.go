package serve

import (
	"strings"
	"sync"

	"lnk.dev/lnk/services/harness/store"
)

// ranIndex says whether a conversation holds a queued message's event
// (the once-only check before a queued turn), or a message from a
// sender who speaks once (run:<id>, a background command's ending: the
// endpoint's Taken check), reading at each look only the events written
// since its last look at that conversation, so a run of queued messages
// or of endings in a long conversation reads it once, not once per
// message. It keeps, for each conversation, the last event it read (its
// number, time, kind, sender and length, to know the conversation is
// still the one it read, not one deleted and made again under the same
// name: any difference and it reads the whole again), the inbox numbers
// the events it read carry, and the senders who speak once whose
// messages it read. One look at a time.
type ranIndex struct {
	mu   sync.Mutex
	at   map[string]*ranMark
	read int // events read in all, the last one of each look again included
}

// ranMark is what the index knows of one conversation.
type ranMark struct {
	last  store.Event // the last event read (Seq 0: none was there)
	ran   map[int64]bool
	spoke map[string]bool // run:<id> senders whose message it holds
}

// pruneAt is the count of inbox numbers a conversation's mark keeps past
// which prune keeps only those still waiting.
const pruneAt = 64

// holds says whether conv (thread's conversation, open) holds an event
// of queued message id. What can't be read is an error, never "not
// there" nor "there".
func (x *ranIndex) holds(conv *store.Conversation, thread string, id int64) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	m, err := x.look(conv, thread)
	if err != nil {
		return false, err
	}
	return m.ran[id], nil
}

// spoke says whether conv (thread's conversation, open) holds a message
// from from, a sender who speaks once (run:<id>). What can't be read is
// an error, never "not there" nor "there".
func (x *ranIndex) spoke(conv *store.Conversation, thread, from string) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	m, err := x.look(conv, thread)
	if err != nil {
		return false, err
	}
	return m.spoke[from], nil
}

// speaksOnce says whether from is a sender who speaks once: a
// background command's ending.
func speaksOnce(from string) bool { return strings.HasPrefix(from, "run:") }

// look brings thread's mark up to conv's last event, reading only what
// was written since its last look (the whole, for a conversation not
// the one it read). x.mu is held.
func (x *ranIndex) look(conv *store.Conversation, thread string) (*ranMark, error) {
	m := x.at[thread]
	var evs []store.Event
	var err error
	if m != nil && m.last.Seq > 0 {
		if evs, err = conv.Since(m.last.Seq - 1); err != nil {
			return nil, err
		}
		x.read += len(evs)
		if len(evs) == 0 || !same(evs[0], m.last) {
			m = nil // not the conversation last read
		} else {
			evs = evs[1:]
		}
	}
	if m == nil || m.last.Seq == 0 {
		if evs, err = conv.Events(); err != nil {
			return nil, err
		}
		x.read += len(evs)
		m = &ranMark{ran: map[int64]bool{}, spoke: map[string]bool{}}
	}
	for _, e := range evs {
		if e.Kind != store.KindMessage {
			continue
		}
		if e.Queued != 0 {
			m.ran[e.Queued] = true
		}
		if speaksOnce(e.From) {
			m.spoke[e.From] = true
		}
	}
	if n := len(evs); n > 0 {
		m.last = evs[n-1]
	}
	if x.at == nil {
		x.at = map[string]*ranMark{}
	}
	x.at[thread] = m
	return m, nil
}

// same says whether a and b are one event: its number, time, kind,
// sender and length alike.
func same(a, b store.Event) bool {
	return a.Seq == b.Seq && a.Time.Equal(b.Time) && a.Kind == b.Kind && a.From == b.From && len(a.Text) == len(b.Text)
}

// prune keeps of thread's inbox numbers, once past pruneAt, only those
// still waiting, the inbox read by waiting after every look whose
// numbers it keeps: a message's event is written after it was queued,
// so a number not waiting then is done, and never waits again. An inbox
// that can't be read forgets the conversation, read whole at its next
// look.
func (x *ranIndex) prune(thread string, waiting func() ([]store.Queued, error)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.at[thread]
	if m == nil || len(m.ran) <= pruneAt {
		return
	}
	qs, err := waiting()
	if err != nil {
		delete(x.at, thread)
		return
	}
	keep := map[int64]bool{}
	for _, q := range qs {
		if m.ran[q.ID] {
			keep[q.ID] = true
		}
	}
	m.ran = keep
}
