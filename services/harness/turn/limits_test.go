package turn

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/harness/tools"
)

// TestAtMost16CallsARound: of 20 calls the model asks for in one round,
// the first 16 are made; the rest are dropped, logged, and the model is
// told.
func TestAtMost16CallsARound(t *testing.T) {
	fx := newFixture(t)
	run := startTool(t, map[string]func(string) string{"command": func(string) string { return "ok" }})
	m, wire := scriptedModel(t, func(n int, _ oaRequest) (string, []scriptedCall) {
		if n > 0 {
			return "done", nil
		}
		var calls []scriptedCall
		for i := 0; i < 20; i++ {
			calls = append(calls, scriptedCall{"run__command", fmt.Sprintf(`{"i":%d}`, i)})
		}
		return "", calls
	})
	r := fx.runner(t, Config{Model: m, ModelName: "scripted", Tools: fx.toolSet(t, tools.Tool{Name: "run-ab12", URL: run.URL})})
	a, err := r.Turn(context.Background(), fx.conv, "main", Incoming{Text: "go"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.calls(); len(got) != 16 || !strings.Contains(got[15], `"i":15`) {
		t.Fatalf("%d calls made: %v", len(got), got)
	}
	if a.Calls != 16 || !fx.log.has("4 calls dropped", "at most 16") {
		t.Fatalf("answer %+v\n%s", a, fx.log)
	}
	second := wire.all()[1]
	var told bool
	for _, msg := range second.Messages {
		if msg.Role == "tool" && strings.Contains(contentText(msg.Content), "4 more calls of this round were dropped") {
			told = true
		}
	}
	if !told {
		t.Fatal("the model isn't told of the dropped calls")
	}
}

// TestAtMost8Rounds: a model that always asks for a call gets 8 rounds
// of calls; the ninth request offers no tool, and a call it still asks
// for is dropped.
func TestAtMost8Rounds(t *testing.T) {
	fx := newFixture(t)
	run := startTool(t, map[string]func(string) string{"command": func(string) string { return "again" }})
	m, wire := scriptedModel(t, func(n int, _ oaRequest) (string, []scriptedCall) {
		return fmt.Sprintf("round %d", n), []scriptedCall{{"run__command", `{}`}}
	})
	r := fx.runner(t, Config{Model: m, ModelName: "scripted", Tools: fx.toolSet(t, tools.Tool{Name: "run-ab12", URL: run.URL})})
	a, err := r.Turn(context.Background(), fx.conv, "main", Incoming{Text: "loop"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := wire.all()
	if len(run.calls()) != 8 || a.Rounds != 8 || len(reqs) != 9 || a.Text != "round 8" {
		t.Fatalf("%d calls, %d requests, answer %+v", len(run.calls()), len(reqs), a)
	}
	if len(reqs[7].Tools) == 0 || len(reqs[8].Tools) != 0 {
		t.Fatalf("tools offered in the 8th and 9th requests: %d, %d", len(reqs[7].Tools), len(reqs[8].Tools))
	}
	if !fx.log.has("1 calls dropped", "rounds of calls are spent") {
		t.Fatalf("log:\n%s", fx.log)
	}
}

// TestToolAnswer32KiBKept: of a 100 KiB answer, 32 KiB is kept, in the
// log and for the model, which is told it was cut; a short answer is kept
// whole (the positive control).
func TestToolAnswer32KiBKept(t *testing.T) {
	fx := newFixture(t)
	run := startTool(t, map[string]func(string) string{
		"command": func(string) string { return strings.Repeat("a", 100<<10) },
		"list":    func(string) string { return "short" },
	})
	m, wire := scriptedModel(t, func(n int, _ oaRequest) (string, []scriptedCall) {
		if n > 0 {
			return "done", nil
		}
		return "", []scriptedCall{{"run__command", `{}`}, {"run__list", `{}`}}
	})
	r := fx.runner(t, Config{Model: m, ModelName: "scripted", Tools: fx.toolSet(t, tools.Tool{Name: "run-ab12", URL: run.URL})})
	if _, err := r.Turn(context.Background(), fx.conv, "main", Incoming{Text: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	ev := fx.events(t)
	long, short := ev[2], ev[3]
	if !strings.HasPrefix(long.Text, strings.Repeat("a", 32<<10)+"\n[Link Harness: the answer was cut here: 102400 bytes, of which 32768 are kept]") || strings.Count(long.Text, "a") > 32<<10+10 {
		t.Fatalf("the long answer kept %d bytes: %.80q…", len(long.Text), long.Text[len(long.Text)-80:])
	}
	if short.Text != "short" {
		t.Fatalf("the short answer: %q", short.Text)
	}
	for _, msg := range wire.all()[1].Messages {
		if msg.Role == "tool" && len(contentText(msg.Content)) > 33<<10 {
			t.Fatal("the model got more than 32 KiB of an answer")
		}
	}
}

// TestCallNotOfferedAnsweredAsError: calls to names not offered (another
// tool's, a URL) are answered to the model as errors from the harness,
// never from the owner, and reach no tool; the offered call beside them
// is made (the positive control).
func TestCallNotOfferedAnsweredAsError(t *testing.T) {
	fx := newFixture(t)
	run := startTool(t, map[string]func(string) string{"command": func(string) string { return "ran" }})
	m, _ := scriptedModel(t, func(n int, _ oaRequest) (string, []scriptedCall) {
		if n > 0 {
			return "done", nil
		}
		return "", []scriptedCall{{"web__fetch", `{}`}, {"http://127.0.0.1:9/x", `{}`}, {"run__command", `{}`}}
	})
	r := fx.runner(t, Config{Model: m, ModelName: "scripted", Tools: fx.toolSet(t, tools.Tool{Name: "run-ab12", URL: run.URL})})
	if _, err := r.Turn(context.Background(), fx.conv, "main", Incoming{Text: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	ev := fx.events(t)
	for _, e := range ev[2:4] {
		if e.From != harnessFrom || !strings.HasPrefix(e.Text, "[error] no tool call") {
			t.Fatalf("a call not offered answered %+v", e)
		}
	}
	if ev[4].From != "run" || len(run.calls()) != 1 {
		t.Fatalf("the offered call: %+v, %v", ev[4], run.calls())
	}
	if !fx.log.has("web__fetch", "not made") {
		t.Fatalf("log:\n%s", fx.log)
	}
}

// TestWindowMadeAnew: a recorded window naming no message of the log (its
// time differs) is made anew, and said; one that names a message is kept
// (the positive control).
func TestWindowMadeAnew(t *testing.T) {
	fx := newFixture(t)
	m, wire := scriptedModel(t, func(int, oaRequest) (string, []scriptedCall) { return "ok", nil })
	r := fx.runner(t, Config{Model: m, ModelName: "scripted"})
	ctx := context.Background()
	for _, s := range []string{"one", "two", "three"} {
		if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: s}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ev := fx.events(t)
	// An answer recording a window that starts at "three", at a time that
	// isn't its own.
	bad := &store.Event{Kind: "answer", Text: "x", Window: &store.Window{Seq: ev[4].Seq, Time: ev[4].Time.Add(time.Second)}}
	if _, err := fx.conv.Append(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: "four"}, nil); err != nil {
		t.Fatal(err)
	}
	if !fx.log.has("made anew") {
		t.Fatalf("log:\n%s", fx.log)
	}
	reqs := wire.all()
	if got := contentText(reqs[len(reqs)-1].Messages[1].Content); got != "one" {
		t.Fatalf("the window made anew starts at %q", got)
	}
	// A good record: a window starting at "four".
	ev = fx.events(t)
	good := &store.Event{Kind: "answer", Text: "y", Window: &store.Window{Seq: ev[7].Seq, Time: ev[7].Time}}
	if _, err := fx.conv.Append(good); err != nil {
		t.Fatal(err)
	}
	fx.log.lines = nil
	if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: "five"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs = wire.all()
	if got := contentText(reqs[len(reqs)-1].Messages[1].Content); got != "four" || fx.log.has("made anew") {
		t.Fatalf("the recorded window starts at %q\n%s", got, fx.log)
	}
}

// TestCallIDsMadeUnique: calls the model gives one id, none, or one a
// provider wouldn't take back each get an id of their own, so each answer
// goes with its call; a good id is kept (the positive control).
func TestCallIDsMadeUnique(t *testing.T) {
	got := callIDs([]model.ToolCall{{ID: "call_1"}, {ID: "call_1"}, {ID: ""}, {ID: "a b\n"}, {ID: strings.Repeat("x", 65)}}, 7)
	want := []string{"call_1", "lnk_7_1", "lnk_7_2", "lnk_7_3", "lnk_7_4"}
	for i, c := range got {
		if c.ID != want[i] {
			t.Fatalf("ids %v, want %v", got, want)
		}
	}
}
