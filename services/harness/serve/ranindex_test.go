package serve

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/store"
)

// wholeRan is the once-only check as a whole read answers it: the inbox
// numbers of conv's message events.
func wholeRan(t *testing.T, conv *store.Conversation) map[int64]bool {
	t.Helper()
	evs, err := conv.Events()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]bool{}
	for _, e := range evs {
		if e.Kind == store.KindMessage && e.Queued != 0 {
			out[e.Queued] = true
		}
	}
	return out
}

// TestRanIndexIsTheWholeRead: over a long conversation written in
// batches (messages queued and not, the same inbox numbers in several
// events, answers between), the index answers every number, present or
// not, as a whole read of the real store does after each batch, while
// reading each event once and, at each later look, only what was written
// since (and the one event it knew, to know the conversation is the
// same). A conversation deleted and made again under the same name,
// longer than the one read or shorter, is read whole again, never taken
// for the one it knew.
func TestRanIndexIsTheWholeRead(t *testing.T) {
	dir := agentDir(t, "words")
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ch, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	open := func() *store.Conversation {
		v, err := ch.Open(hookThread, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rnd := rand.New(rand.NewPCG(27, 3))
	var x ranIndex
	written, looks := 0, 0
	// grow appends batches of events numbered from ids and compares the
	// index with the whole read after each.
	grow := func(conv *store.Conversation, batches int, ids []int64) {
		t.Helper()
		for b := 0; b < batches; b++ {
			for n := 1 + rnd.IntN(60); n > 0; n-- {
				e := &store.Event{Kind: store.KindMessage, From: hookFrom, Text: "a post"}
				switch rnd.IntN(3) {
				case 0:
					e.Queued = ids[rnd.IntN(len(ids))]
				case 1:
					e.Kind, e.From, e.Text = store.KindAnswer, "", "an answer"
				}
				if _, err := conv.Append(e); err != nil {
					t.Fatal(err)
				}
				written++
			}
			want := wholeRan(t, conv)
			for _, id := range []int64{ids[0], ids[len(ids)/2], ids[len(ids)-1], 1, 999_999} {
				got, err := x.holds(conv, hookThread, id)
				looks++
				if err != nil || got != want[id] {
					t.Fatalf("batch %d, number %d: the index says %v (%v), the whole read %v", b, id, got, err, want[id])
				}
			}
		}
	}
	ids := make([]int64, 24)
	for i := range ids {
		ids[i] = int64(1000 + i)
	}
	conv := open()
	grow(conv, 60, ids)
	if written < 600 {
		t.Fatalf("only %d events written: not a long conversation", written)
	}
	if x.read > written+looks {
		t.Fatalf("%d events read for %d written and %d looks: events were read again", x.read, written, looks)
	}
	conv.Close()

	// Deleted, and made again: longer than the one read before its first
	// look (a number only its first event holds), then shorter.
	for _, batches := range []int{80, 1} {
		if err := os.RemoveAll(filepath.Join(dir, "chats", hookThread)); err != nil {
			t.Fatal(err)
		}
		conv = open()
		if batches > 1 {
			if _, err := conv.Append(&store.Event{Kind: store.KindMessage, From: hookFrom, Text: "first", Queued: 7777}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i <= written; i++ {
				if _, err := conv.Append(&store.Event{Kind: store.KindAnswer, Text: "an answer"}); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range []int64{7777, ids[1]} {
				got, err := x.holds(conv, hookThread, id)
				if want := id == 7777; err != nil || got != want {
					t.Fatalf("made again, longer: number %d: the index says %v (%v), the whole read %v", id, got, err, want)
				}
			}
		}
		others := make([]int64, 8)
		for i := range others {
			others[i] = int64(5000 + batches*100 + i)
		}
		others[0] = ids[0] // a number the old conversation held, not this one until written
		grow(conv, batches, others)
		conv.Close()
	}
}

// TestRanIndexPrunes: past pruneAt numbers, the index keeps only those
// still waiting in the inbox; an inbox that can't be read forgets the
// conversation, whose next look reads it whole (and answers the same).
func TestRanIndexPrunes(t *testing.T) {
	dir := agentDir(t, "words")
	f, _ := os.Open(dir)
	defer f.Close()
	ch, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	conv, err := ch.Open(hookThread, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	for id := int64(1); id <= pruneAt+10; id++ {
		if _, err := conv.Append(&store.Event{Kind: store.KindMessage, From: hookFrom, Text: "x", Queued: id}); err != nil {
			t.Fatal(err)
		}
	}
	var x ranIndex
	if ok, err := x.holds(conv, hookThread, 3); !ok || err != nil {
		t.Fatalf("number 3: %v %v", ok, err)
	}
	x.prune(hookThread, func() ([]store.Queued, error) { return []store.Queued{{ID: 3}, {ID: 4242}}, nil })
	if m := x.at[hookThread]; len(m.ran) != 1 || !m.ran[3] {
		t.Fatalf("kept %v, want 3 alone", m.ran)
	}
	x.at[hookThread].ran[pruneAt+100] = true // past pruneAt again
	for i := int64(0); i < pruneAt; i++ {
		x.at[hookThread].ran[10_000+i] = true
	}
	x.prune(hookThread, func() ([]store.Queued, error) { return nil, errors.New("the inbox can't be read") })
	if x.at[hookThread] != nil {
		t.Fatal("an unread inbox kept the conversation's numbers")
	}
	if ok, err := x.holds(conv, hookThread, pruneAt+10); !ok || err != nil {
		t.Fatalf("read whole again: %v %v", ok, err)
	}
}

// TestTakenIsTheWholeRead: the endpoint's check of a sender who speaks
// once (Agent.taken, run:<id>), asked of the real agent over a long
// conversation written in batches (endings, messages of others, answers
// between), answers every sender as a whole read of the real store does
// after each batch, while reading each event once (the queued check's
// index, ranIndex: one index, not a second) and, at each later look,
// only what was written since. A conversation deleted and made again
// under the same name is read whole again: an ending the old one held
// is not taken for the new one's. Any other sender is never "taken".
func TestTakenIsTheWholeRead(t *testing.T) {
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	defer srv.Close()
	dir := agentDir(t, "words")
	c := &config.Config{AgentID: strings.Repeat("c3", 16), Owner: "ana", Name: "main", Key: config.NewKey(), Port: 20000, AgentDir: dir,
		Model: config.Model{Format: "openai", BaseURL: srv.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	a, err := Open(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const thread = "work"
	rnd := rand.New(rand.NewPCG(27, 4))
	written, looks := 0, 0
	senders := make([]string, 24)
	for i := range senders {
		senders[i] = fmt.Sprintf("run:%016x", 1000+i)
	}
	grow := func(batches int, senders []string) {
		t.Helper()
		for b := 0; b < batches; b++ {
			// Written and closed before the check opens it (one writer).
			conv, err := a.chats.Open(thread, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for n := 1 + rnd.IntN(60); n > 0; n-- {
				e := &store.Event{Kind: store.KindMessage, From: hookFrom, Text: "a post"}
				switch rnd.IntN(4) {
				case 0:
					e.From = senders[rnd.IntN(len(senders))]
				case 1:
					e.Kind, e.From, e.Text = store.KindAnswer, "", "an answer"
				}
				if _, err := conv.Append(e); err != nil {
					t.Fatal(err)
				}
				written++
			}
			evs, err := conv.Events()
			conv.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, e := range evs {
				if e.Kind == store.KindMessage {
					want[e.From] = true
				}
			}
			for _, from := range []string{senders[0], senders[len(senders)/2], senders[len(senders)-1], "run:ffffffffffffffff"} {
				got, err := a.taken(thread, from)
				looks++
				if err != nil || got != want[from] {
					t.Fatalf("batch %d, %s: taken says %v (%v), the whole read %v", b, from, got, err, want[from])
				}
			}
			if got, err := a.taken(thread, hookFrom); got || err != nil {
				t.Fatalf("a sender who may speak again is taken: %v %v", got, err)
			}
		}
	}
	grow(60, senders)
	if written < 600 {
		t.Fatalf("only %d events written: not a long conversation", written)
	}
	if a.ran.read > written+looks {
		t.Fatalf("%d events read for %d written and %d looks: events were read again", a.ran.read, written, looks)
	}
	if a.ran.read < written {
		t.Fatalf("the index read %d of the %d events written: the check reads around it (a second reading)", a.ran.read, written)
	}
	if err := os.RemoveAll(filepath.Join(dir, "chats", thread)); err != nil {
		t.Fatal(err)
	}
	grow(2, []string{"run:00000000000000aa"}) // none of senders: each is not taken now
}
