package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzMax is the line limit the log reader is fuzzed with: small, so
// the fuzzer reaches lines past it.
const fuzzMax = 256

// FuzzLogReader: the reader of a log never panics; what it takes are
// events of this store's, numbers rising; and the tail reader Open uses
// agrees with it on where the whole lines end and which is the last.
func FuzzLogReader(f *testing.F) {
	chunk := tailChunk
	tailChunk = 7
	f.Cleanup(func() { tailChunk = chunk })
	f.Fuzz(func(t *testing.T, data []byte) {
		var all [][]byte
		torn, rerr := readLines(bytes.NewReader(data), fuzzMax, func(l []byte) error {
			all = append(all, bytes.Clone(l))
			return nil
		})
		end, last, terr := lastLine(bytes.NewReader(data), int64(len(data)), fuzzMax)
		if rerr == nil {
			if terr != nil {
				t.Fatalf("the tail reader refused what the reader took: %v", terr)
			}
			if end != int64(len(data)-len(torn)) {
				t.Fatalf("whole lines end at %d, the tail reader says %d", len(data)-len(torn), end)
			}
			var want []byte
			if len(all) > 0 {
				want = all[len(all)-1]
			}
			if !bytes.Equal(last, want) || (last == nil) != (len(all) == 0) {
				t.Fatalf("last line %q, the tail reader says %q", want, last)
			}
			// Read backwards, the same lines, last first.
			i := len(all)
			err := linesBack(bytes.NewReader(data), end, fuzzMax, func(l []byte) (bool, error) {
				i--
				if i < 0 || !bytes.Equal(l, all[i]) {
					t.Fatalf("backwards, line %d is %q", i, l)
				}
				return false, nil
			})
			if err != nil || i != 0 {
				t.Fatalf("backwards: %d lines left, %v", i, err)
			}
		} else if !errors.Is(rerr, ErrLineTooLong) {
			t.Fatalf("the reader failed otherwise: %v", rerr)
		}
		prev := int64(0)
		parseLines(bytes.NewReader(data), fuzzMax, 0, func(e Event) {
			if e.Seq <= prev || checkEvent(&e) != nil {
				t.Fatalf("took %+v after %d", e, prev)
			}
			prev = e.Seq
		})
	})
}

// FuzzFrames: the reader of events.zst never panics, never gives a
// frame past MaxFrame, and always moves on.
func FuzzFrames(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		if end, err := frameEnd(r, 0); err == nil && (end <= 0 || end > int64(len(data))) {
			t.Fatalf("a frame ending at %d of %d", end, len(data))
		}
		last := int64(0)
		eachFrame(r, int64(len(data)), func(_ int64, lines []byte) error {
			if len(lines) > MaxFrame {
				t.Fatalf("a frame of %d bytes", len(lines))
			}
			var err error
			last, err = frameEvents(lines, last, func(Event) {})
			return err
		})
	})
}

// FuzzOldMessage: an older harness's file is taken only under a name
// that is its number, and then as the event of that number.
func FuzzOldMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		n, ok := oldNumber(name)
		if !ok {
			return
		}
		if strings.TrimLeft(strings.TrimSuffix(name, ".json"), "0") != strconv.FormatInt(n, 10) {
			t.Fatalf("%q read as number %d", name, n)
		}
		e, err := decodeOld(n, data)
		if err != nil {
			return
		}
		if e.Seq != n || checkEvent(&e) != nil {
			t.Fatalf("%q gave %+v", name, e)
		}
	})
}

// FuzzReadable: whatever a message, an answer, others' message or a
// tool's answer says, and whoever sent it, conversation.md holds the
// store's headings only, in order, and no HTML block or fence, as a
// CommonMark parser reads it.
func FuzzReadable(f *testing.F) {
	f.Fuzz(func(t *testing.T, text, from string) {
		when := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
		var md bytes.Buffer
		for i, e := range []Event{
			{Kind: KindMessage, Text: text},
			{Kind: KindAnswer, Text: text, Calls: []Call{{Name: from, Arguments: []byte(strconv.Quote(text))}}},
			{Kind: KindMessage, From: from, Text: text},
			{Kind: KindToolResult, From: from, Text: text},
			{Kind: KindSummary, Text: text},
		} {
			e.Seq, e.Time = int64(i+1), when
			renderEvent(&md, &e, from)
		}
		got := parse(md.Bytes())
		if len(got.headings) != 5 || got.html != 0 || got.fences != 0 {
			t.Fatalf("%+v\n%s", got, md.String())
		}
		others := "Others · from "
		if from == "" {
			others = "You · 3 " // no sender is the owner
		}
		for i, want := range []string{"You · 1 ", "· 2 ", others, "Tool ", "· summary · 5 "} {
			if !strings.Contains(got.headings[i], want) {
				t.Fatalf("heading %d is %q\n%s", i, got.headings[i], md.String())
			}
		}
	})
}

// FuzzParseSubagent: a subagent.json is read strictly or refused, never
// with a null list (which would read as every tool), and what is taken
// writes back as itself.
func FuzzParseSubagent(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSubagent(data)
		if err != nil {
			return
		}
		if s.Tools == nil {
			t.Fatal("a subagent.json with no list was taken")
		}
		b, _ := json.Marshal(s)
		again, err := ParseSubagent(b)
		if err != nil || !slices.Equal(again.Tools, s.Tools) || again.Model != s.Model {
			t.Fatalf("%s read back as %+v, %v", b, again, err)
		}
	})
}
