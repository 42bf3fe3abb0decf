package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/harness/model"
)

// TestCallCarriesMeta: every call carries link.local/thread, hops and the
// turn's tools (as granted) in _meta.
func TestCallCarriesMeta(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	q := startPeer(t, peerOpts{tools: []*mcp.Tool{call("y")}})
	s := newSet(t, "ab12", Settings{}, &logBuf{}, Tool{Name: "run-ab12", URL: p.URL}, Tool{Name: "web", URL: q.URL})
	tt := s.Begin(context.Background(), Scope{Thread: "main:42", Hops: 3})
	r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "run__x", Arguments: json.RawMessage(`{"a":1}`)})
	tt.End()
	if r.IsError || !r.Sent || r.Tool != "run" || r.Text != `x {"a":1}` {
		t.Fatalf("result %+v", r)
	}
	seen := p.seen()
	if len(seen) != 1 {
		t.Fatalf("calls seen: %+v", seen)
	}
	m := seen[0].Meta
	if m[MetaThread] != "main:42" || m[MetaHops] != float64(3) {
		t.Fatalf("_meta %v", m)
	}
	var names []string
	for _, v := range m[MetaTools].([]any) {
		names = append(names, v.(string))
	}
	if !slices.Equal(names, []string{"run-ab12", "web"}) {
		t.Fatalf("_meta tools %v", names)
	}
}

// TestScopeNarrowsTools: a turn given a list of tools offers, and names in
// _meta, only those; an empty list offers none.
func TestScopeNarrowsTools(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	q := startPeer(t, peerOpts{tools: []*mcp.Tool{call("y")}})
	s := newSet(t, "ab12", Settings{}, &logBuf{}, Tool{Name: "run-ab12", URL: p.URL}, Tool{Name: "web", URL: q.URL})
	tt := s.Begin(context.Background(), Scope{Thread: "sub", Tools: []string{"web"}})
	if got := offerNames(tt); !slices.Equal(got, []string{"web__y"}) || !slices.Equal(tt.Names(), []string{"web"}) {
		t.Fatalf("offered %v, names %v", got, tt.Names())
	}
	if r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "run__x"}); !r.IsError || r.Sent {
		t.Fatalf("a call outside the scope: %+v", r)
	}
	tt.Call(context.Background(), model.ToolCall{ID: "2", Name: "web__y"})
	tt.End()
	if m := q.seen()[0].Meta[MetaTools].([]any); len(m) != 1 || m[0] != "web" {
		t.Fatalf("_meta tools %v", m)
	}
	none := s.Begin(context.Background(), Scope{Thread: "stranger", Tools: []string{}})
	defer none.End()
	if len(none.Offers()) != 0 {
		t.Fatalf("an empty list offered %v", offerNames(none))
	}
	if len(p.seen()) != 0 {
		t.Fatal("run was called from outside the scope")
	}
}

// TestCallNotOfferedSentNowhere: a name not offered, or with arguments
// that are not an object, is answered as an error and reaches no tool; the
// offered call beside it does (the positive control).
func TestCallNotOfferedSentNowhere(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	s := newSet(t, "", Settings{}, &logBuf{}, Tool{Name: "web", URL: p.URL})
	tt := s.Begin(context.Background(), Scope{Thread: "t"})
	defer tt.End()
	before, _, _ := p.counts()
	for _, c := range []model.ToolCall{
		{ID: "1", Name: "web__nope"},
		{ID: "2", Name: "http://127.0.0.1:1/x"},
		{ID: "3", Name: "web__x", Arguments: json.RawMessage(`[1]`)},
	} {
		if r := tt.Call(context.Background(), c); !r.IsError || r.Sent {
			t.Fatalf("%s: %+v", c.Name, r)
		}
	}
	if after, _, _ := p.counts(); after != before {
		t.Fatalf("%d requests reached the tool", after-before)
	}
	if r := tt.Call(context.Background(), model.ToolCall{ID: "4", Name: "web__x"}); r.IsError || !r.Sent {
		t.Fatalf("the offered call: %+v", r)
	}
}

// TestSessionPerToolPerTurn: a turn opens a session with a tool only at
// its first call, makes every call of the turn in it, and ends it with
// the turn; the next turn's is another.
func TestSessionPerToolPerTurn(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	s := newSet(t, "", Settings{}, &logBuf{}, Tool{Name: "web", URL: p.URL})
	ctx := context.Background()

	idle := s.Begin(ctx, Scope{Thread: "a"}) // lists: a session of its own, ended
	_, delAfterList, _ := p.counts()
	idle.End()
	if _, d, _ := p.counts(); d != delAfterList {
		t.Fatal("a turn that called nothing ended a session")
	}
	if len(p.seen()) != 0 {
		t.Fatal("a call was made")
	}

	one := s.Begin(ctx, Scope{Thread: "a"})
	one.Call(ctx, model.ToolCall{ID: "1", Name: "web__x"})
	one.Call(ctx, model.ToolCall{ID: "2", Name: "web__x"})
	_, d1, _ := p.counts()
	one.End()
	s.Wait()
	if _, d2, _ := p.counts(); d2 != d1+1 {
		t.Fatalf("ending the turn ended %d sessions, want 1", d2-d1)
	}
	two := s.Begin(ctx, Scope{Thread: "b"})
	two.Call(ctx, model.ToolCall{ID: "3", Name: "web__x"})
	two.End()
	seen := p.seen()
	if len(seen) != 3 || seen[0].Session != seen[1].Session || seen[1].Session == seen[2].Session {
		t.Fatalf("sessions of the calls: %q %q %q", seen[0].Session, seen[1].Session, seen[2].Session)
	}
}

// TestMemorySessionKept10MinIdle1Hour: memory's session serves the turns after; it is
// ended once unused for MemoryIdle, MemoryMax after it started, and at
// once after a call fails other than with the tool's own error.
func TestMemorySessionKept10MinIdle1Hour(t *testing.T) {
	var fail atomic.Bool
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("remember")}, handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if fail.Load() {
			return nil, errors.New("the store is gone")
		}
		if string(req.Params.Arguments) == `{"own":true}` {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "notes full"}}}, nil
		}
		return echo(ctx, req)
	}})
	ctx := context.Background()
	remember := func(s *Set, args string) Result {
		tt := s.Begin(ctx, Scope{Thread: "t"})
		defer tt.End()
		return tt.Call(ctx, model.ToolCall{ID: "1", Name: "memory__remember", Arguments: json.RawMessage(args)})
	}
	sessions := func() []string {
		var out []string
		for _, c := range p.seen() {
			out = append(out, c.Session)
		}
		return out
	}

	t.Run("kept across turns and after the tool's own error", func(t *testing.T) {
		log := &logBuf{}
		s := newSet(t, "ab12", Settings{MemoryIdle: time.Hour, MemoryMax: time.Hour}, log, Tool{Name: "memory-ab12", URL: p.URL})
		n := len(p.seen())
		remember(s, `{}`)
		if r := remember(s, `{"own":true}`); !r.IsError {
			t.Fatalf("the tool's own error: %+v", r)
		}
		remember(s, `{}`)
		got := sessions()[n:]
		if len(got) != 3 || got[0] != got[1] || got[1] != got[2] || !s.mem.open() {
			t.Fatalf("sessions %q\n%s", got, log)
		}
	})
	t.Run("ended after 10 minutes idle (MemoryIdle)", func(t *testing.T) {
		log := &logBuf{}
		s := newSet(t, "ab12", Settings{MemoryIdle: 50 * time.Millisecond, MemoryMax: time.Hour}, log, Tool{Name: "memory-ab12", URL: p.URL})
		remember(s, `{}`)
		waitFor(t, func() bool { return !s.mem.open() })
		if !log.has("memory: session ended", "no turn used it") {
			t.Fatalf("log:\n%s", log)
		}
	})
	t.Run("ended an hour after it started (MemoryMax), however busy", func(t *testing.T) {
		log := &logBuf{}
		s := newSet(t, "ab12", Settings{MemoryIdle: time.Hour, MemoryMax: 150 * time.Millisecond}, log, Tool{Name: "memory-ab12", URL: p.URL})
		n := len(p.seen())
		deadline := time.Now().Add(5 * time.Second)
		for !log.has("memory: session ended", "after it started") && time.Now().Before(deadline) {
			remember(s, `{}`) // busy: used far more often than MemoryIdle
			time.Sleep(10 * time.Millisecond)
		}
		remember(s, `{}`)
		got := sessions()[n:]
		if got[0] == got[len(got)-1] {
			t.Fatalf("one session past MemoryMax\n%s", log)
		}
	})
	t.Run("ended at once after a failure other than the tool's own", func(t *testing.T) {
		log := &logBuf{}
		s := newSet(t, "ab12", Settings{MemoryIdle: time.Hour, MemoryMax: time.Hour}, log, Tool{Name: "memory-ab12", URL: p.URL})
		remember(s, `{}`)
		fail.Store(true)
		r := remember(s, `{}`)
		fail.Store(false)
		if !r.IsError || s.mem.open() || !log.has("memory: session ended", "a call failed") {
			t.Fatalf("after a failure: %+v open=%v\n%s", r, s.mem.open(), log)
		}
	})
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5 s")
}

// TestOutOfScopeCallRefusedAndLogged: in a turn narrowed to some of the
// agent's tools (a subagent's), a call to a tool of the agent's left out
// is refused saying so, reaches no tool, and is logged once; the call to
// a tool in scope beside it is made, with the turn's model in _meta.
func TestOutOfScopeCallRefusedAndLogged(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	q := startPeer(t, peerOpts{tools: []*mcp.Tool{call("y")}})
	log := &logBuf{}
	s := newSet(t, "ab12", Settings{}, log, Tool{Name: "run-ab12", URL: p.URL}, Tool{Name: "web", URL: q.URL})
	tt := s.Begin(context.Background(), Scope{Thread: "task-1", Tools: []string{"web"}, Model: "link-builtin"})
	r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "run__x"})
	if !r.IsError || r.Sent || !strings.Contains(r.Text, "the tool run is not among this conversation's tools") {
		t.Fatalf("the call outside the scope: %+v", r)
	}
	if !log.has("refused run__x in conversation task-1", "run is not among its tools") {
		t.Fatalf("not logged: %s", log)
	}
	if r := tt.Call(context.Background(), model.ToolCall{ID: "2", Name: "web__y"}); r.IsError || !r.Sent {
		t.Fatalf("the call in scope: %+v", r)
	}
	tt.End()
	if len(p.seen()) != 0 {
		t.Fatal("run was called from outside the scope")
	}
	if m := q.seen()[0].Meta; m[MetaModel] != "link-builtin" {
		t.Fatalf("_meta %v", m)
	}
}
