package store

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSinceAgreesWithEventsWherevertheEventsAre: with events in an older
// harness's files, in frames and in the log, Since(n) is exactly the
// events after n that Events gives, for every n.
func TestSinceAgreesWithEventsWherevertheEventsAre(t *testing.T) {
	c, _ := prepared(t, func(th string) {
		os.Remove(filepath.Join(th, "conversation.md"))
		olderChat(th) // 1, 2, 10
	})
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for i := 0; i < 5; i++ {
		says(t, v, fmt.Sprint("framed ", i))
	}
	if err := v.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		says(t, v, fmt.Sprint("logged ", i))
	}
	all, err := v.Events()
	if err != nil || len(all) != 13 {
		t.Fatalf("%d events, %v", len(all), err)
	}
	for n := int64(0); n <= v.Last()+1; n++ {
		var want []Event
		for _, e := range all {
			if e.Seq > n {
				want = append(want, e)
			}
		}
		got, err := v.Since(n)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("since %d: %d events, %v; want %d", n, len(got), err, len(want))
		}
	}
}

// TestSinceReadsOnlyTheLogsEnd: Since of the last few events reads the
// log from its end back to them, so a line it never reaches is not read
// (the same log's Events is refused for it), and a bad line it does
// reach is refused.
func TestSinceReadsOnlyTheLogsEnd(t *testing.T) {
	c, _ := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte("early garbage\n"+line(5, "five")+line(6, "six")+line(7, "seven")), 0o600)
	})
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got, err := v.Since(5); err != nil || len(got) != 2 || got[0].Text != "six" || got[1].Text != "seven" {
		t.Fatalf("since 5: %+v %v", got, err)
	}
	if _, err := v.Events(); err == nil {
		t.Error("Events read past the garbage")
	}
	if _, err := v.Since(2); err == nil {
		t.Error("Since 2 read past the garbage")
	}
}
