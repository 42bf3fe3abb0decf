package endpoint

import (
	"context"
	"encoding/hex"
	"slices"
	"testing"
)

// TestSubagentHeaders: Link-Tools and Link-Model reach the turn only
// with a Link-From of task-<id> into its own conversation, Link-Tools a
// JSON array of tool names ([] none); any other sender, thread or shape
// is refused 400 and runs nothing. The client sends them as the way in
// gives them (the positive control, [] for an empty list).
func TestSubagentHeaders(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	var seen []*Subagent
	a.Turn = turnFunc(func(ctx context.Context, m Message, onText func(string)) (int64, error) {
		seen = append(seen, m.Subagent)
		return a.turn.Turn(ctx, m, onText)
	})
	port, _ := serve(t, a)
	h := func(extra ...string) map[string]string {
		m := map[string]string{HeaderAgent: "alpha", HeaderAgentID: idA, "Authorization": "Bearer " + hex.EncodeToString(a.Key)}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	task := `{"thread":"task-aa","text":"x"}`
	for _, c := range []struct {
		name, body string
		h          map[string]string
		status     int
	}{
		{"a subagent's start", task, h(HeaderFrom, "task-aa", HeaderHops, "1", HeaderTools, `["file-1","gh"]`, HeaderModel, "m1"), 200},
		{"none for a schedule", `{"thread":"main","text":"x"}`, h(HeaderFrom, "schedule:j", HeaderTools, `[]`), 400},
		{"none for the owner", task, h(HeaderTools, `[]`), 400},
		{"none into another conversation", `{"thread":"main","text":"x"}`, h(HeaderFrom, "task-aa", HeaderTools, `[]`), 400},
		{"a model alone", task, h(HeaderFrom, "task-aa", HeaderModel, "m1"), 400},
		{"null", task, h(HeaderFrom, "task-aa", HeaderTools, `null`), 400},
		{"a name no tool's", task, h(HeaderFrom, "task-aa", HeaderTools, `["a b"]`), 400},
		{"not a list", task, h(HeaderFrom, "task-aa", HeaderTools, `"gh"`), 400},
	} {
		if st := post(t, port, PathMessage, c.h, c.body); st != c.status {
			t.Errorf("%s: %d, want %d", c.name, st, c.status)
		}
	}
	if len(seen) != 1 || !slices.Equal(seen[0].Tools, []string{"file-1", "gh"}) || seen[0].Model != "m1" {
		t.Fatalf("the turns saw %+v", seen)
	}
	c := client(t, a, port)
	if _, err := c.SendMessage(context.Background(), Message{Thread: "task-bb", From: "task-bb", Hops: 1, Text: "x", Subagent: &Subagent{}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1].Tools == nil || len(seen[1].Tools) != 0 || seen[1].Model != "" {
		t.Fatalf("the client's empty list reached the turn as %+v", seen[1])
	}
}
