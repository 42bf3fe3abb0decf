package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
)

// subagentAgent is an agent with run, file and gh (and web when more),
// [model] allow = ["other-model"], its turns' offers recorded.
func subagentAgent(t *testing.T, dir string, more bool) (*Agent, *offered, string) {
	t.Helper()
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	t.Cleanup(srv.Close)
	id := strings.Repeat("d4", 16)
	env := map[string]string{
		"LNK_TOOL_RUN":  toolServer(t, "command"),
		"LNK_TOOL_FILE": toolServer(t, "read"),
		"LNK_TOOL_GH":   toolServer(t, "search"),
		"LNK_TOOL_WEB":  toolServer(t, "fetch"),
	}
	tools := map[string]string{"run-" + id: "LNK_TOOL_RUN", "file-" + id: "LNK_TOOL_FILE", "gh": "LNK_TOOL_GH"}
	if more {
		tools["web"] = "LNK_TOOL_WEB"
	}
	c := &config.Config{AgentID: id, Owner: "ana", Name: "main", Key: config.NewKey(), Port: 20000, AgentDir: dir,
		Model:  config.Model{Format: "openai", BaseURL: srv.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"},
		Tools:  tools,
		Models: []string{"other-model"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Endpoint{Format: "openai", BaseURL: srv.URL + "/v1", Key: "placeholder", Model: builtin.ModelName})
	if err != nil {
		t.Fatal(err)
	}
	rec := &offered{Client: m}
	a, err := Open(c, Options{Model: rec, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, rec, id
}

// kept is the subagent.json a conversation keeps, read back from disk.
func kept(t *testing.T, dir, thread string) *store.Subagent {
	t.Helper()
	p := filepath.Join(dir, "chats", thread, store.SubagentFile)
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s is %v", p, st.Mode())
	}
	b, _ := os.ReadFile(p)
	var s store.Subagent
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestSubagentNarrowedAtEachList: a subagent's conversation keeps the
// list its start brought (subagent.json, read back) and each turn in it
// is offered only those tools: a later message's wider list changes
// nothing, a narrower one narrows it for good, the owner's message there
// brings none and is narrowed too, and a tool granted to the agent later
// is never given to it. The owner's own conversation beside it (the
// positive control) is offered every tool. Through the real store, MCP
// tool sessions and the built-in model.
func TestSubagentNarrowedAtEachList(t *testing.T) {
	dir := agentDir(t, "words")
	a, rec, id := subagentAgent(t, dir, false)
	ctx := context.Background()
	run, file := "run-"+id, "file-"+id
	turn := func(m endpoint.Message, want []string) {
		t.Helper()
		if _, err := a.Turn(ctx, m, nil); err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if got := rec.last(); !slices.Equal(got, want) {
			t.Fatalf("%+v was offered %q, want %q", m, got, want)
		}
	}
	start := endpoint.Message{Thread: "task-aa", From: "task-aa", Text: "look", Hops: 1, Subagent: &endpoint.Subagent{Tools: []string{file, "gh"}}}
	turn(start, []string{"file__read", "gh__search"})
	if k := kept(t, dir, "task-aa"); !slices.Equal(k.Tools, []string{file, "gh"}) || k.Model != "" {
		t.Fatalf("kept %+v", k)
	}
	wider := start
	wider.Subagent = &endpoint.Subagent{Tools: []string{run, file, "gh"}}
	turn(wider, []string{"file__read", "gh__search"})
	turn(endpoint.Message{Thread: "task-aa", Text: "and now?"}, []string{"file__read", "gh__search"})
	narrower := start
	narrower.Subagent = &endpoint.Subagent{Tools: []string{"gh", run}}
	turn(narrower, []string{"gh__search"})
	turn(wider, []string{"gh__search"})
	if k := kept(t, dir, "task-aa"); !slices.Equal(k.Tools, []string{"gh"}) {
		t.Fatalf("kept after narrowing %+v", k)
	}
	turn(endpoint.Message{Thread: "main", Text: "hello"}, []string{"file__read", "gh__search", "run__command"})
	a.Close()

	// The agent granted web later: the subagent still has gh alone.
	b, rec, _ := subagentAgent(t, dir, true)
	a = b
	turn(endpoint.Message{Thread: "task-aa", From: "schedule:0123456789abcdef", Text: "tick", Hops: 2}, []string{"gh__search"})
	turn(endpoint.Message{Thread: "main", Text: "hello"}, []string{"file__read", "gh__search", "run__command", "web__fetch"})
}

// TestSubagentRefusals: a subagent's conversation that keeps no list
// (and whose message brings none) runs no turn; a list for any other
// conversation, a model neither the agent's own nor one [model] allow
// names, and a second model are refused, each before anything is kept
// or answered. A start on the allowed other model runs (the positive
// control), and keeps it.
func TestSubagentRefusals(t *testing.T) {
	dir := agentDir(t, "words")
	a, _, id := subagentAgent(t, dir, false)
	ctx := context.Background()
	for _, c := range []struct {
		m    endpoint.Message
		want string
	}{
		{endpoint.Message{Thread: "task-bb", From: "task-bb", Text: "look", Hops: 1}, "keeps no subagent's tool list"},
		{endpoint.Message{Thread: "task-bb", Text: "look"}, "keeps no subagent's tool list"},
		{endpoint.Message{Thread: "main", Text: "look", Subagent: &endpoint.Subagent{Tools: []string{}}}, "comes only with its own conversation"},
		{endpoint.Message{Thread: "task-cc", From: "task-cc", Text: "look", Hops: 1, Subagent: &endpoint.Subagent{Tools: []string{}, Model: "gpt-9"}}, "neither the agent's own nor one its [model] allow names"},
	} {
		if _, err := a.Turn(ctx, c.m, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.m, err, c.want)
		}
		if _, err := os.Lstat(filepath.Join(dir, "chats", c.m.Thread, store.SubagentFile)); err == nil && c.m.Thread != "main" {
			t.Errorf("%s kept a list after a refusal", c.m.Thread)
		}
	}
	var said strings.Builder
	ok := endpoint.Message{Thread: "task-dd", From: "task-dd", Text: "look", Hops: 1, Subagent: &endpoint.Subagent{Tools: []string{"file-" + id}, Model: "other-model"}}
	if _, err := a.Turn(ctx, ok, func(s string) { said.WriteString(s) }); err != nil || said.Len() == 0 {
		t.Fatalf("on the allowed model: %v %q", err, said.String())
	}
	if k := kept(t, dir, "task-dd"); k.Model != "other-model" {
		t.Fatalf("kept %+v", k)
	}
	again := ok
	again.Subagent = &endpoint.Subagent{Tools: []string{"file-" + id}, Model: builtin.ModelName}
	if _, err := a.Turn(ctx, again, nil); err == nil || !strings.Contains(err.Error(), "runs on the model it was started with (other-model)") {
		t.Fatalf("a second model: %v", err)
	}
}

// TestARefusedStartMakesNothing: through the real endpoint, store and
// built-in model, a subagent's start on a model the agent doesn't allow
// is refused and leaves no chats/task-<id> folder, so a later message
// into task-<id> (a schedule's firing there) is refused as no
// conversation (404, conversation.ErrMissing), never taken into an empty
// one; so is a message that brings no list. The positive control: an
// allowed start makes the conversation and keeps its list, and the
// same later message into it is answered.
func TestARefusedStartMakesNothing(t *testing.T) {
	dir := agentDir(t, "words")
	g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	_, cl, _ := inboxHarness(t, dir, g)
	ctx := context.Background()
	start := func(thread, model string) error {
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			_, err := cl.SendMessage(ctx, endpoint.Message{Thread: thread, From: thread, Text: "look", Hops: 1,
				Subagent: &endpoint.Subagent{Tools: []string{}, Model: model}}, nil, nil)
			if !errors.Is(err, endpoint.ErrNotAnswering) || time.Now().After(end) {
				return err
			}
		}
	}
	later := func(thread string) error {
		_, err := cl.SendMessage(ctx, endpoint.Message{Thread: thread, From: "schedule:0123456789abcdef", Text: "tick", Hops: 2}, nil, nil)
		return err
	}
	var te *endpoint.TurnError
	if err := start("task-ee", "gpt-9"); !errors.As(err, &te) || !strings.Contains(err.Error(), "neither the agent's own nor one its [model] allow names") {
		t.Fatalf("a start on a model not allowed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "chats", "task-ee")); !os.IsNotExist(err) {
		t.Fatalf("the refused start left chats/task-ee: %v", err)
	}
	for _, th := range []string{"task-ee", "task-ff"} {
		err := later(th)
		var re *endpoint.RefusedError
		if !errors.Is(err, conversation.ErrMissing) || !errors.As(err, &re) || re.Status != 404 {
			t.Fatalf("a message into %s, never started: %v", th, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "chats", th)); !os.IsNotExist(err) {
			t.Fatalf("the refused message made chats/%s: %v", th, err)
		}
	}
	if g.times("look") != 0 || g.times("tick") != 0 {
		t.Fatal("a refused message reached the model")
	}

	if err := start("task-ee", ""); err != nil {
		t.Fatalf("the allowed start: %v", err)
	}
	if k := kept(t, dir, "task-ee"); k.Tools == nil || len(k.Tools) != 0 || k.Model != "" {
		t.Fatalf("the allowed start kept %+v", k)
	}
	if err := later("task-ee"); err != nil {
		t.Fatalf("a message into the started subagent's conversation: %v", err)
	}
	// Taken, it may have been queued (202) behind the start's turn still
	// ending, and run a moment later: wait for it, then it ran once.
	for end := time.Now().Add(10 * time.Second); g.times("tick") == 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if g.times("tick") != 1 {
		t.Fatalf("the later message reached the model %d times", g.times("tick"))
	}
}
