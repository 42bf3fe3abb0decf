package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/linkmeta"
	"lnk.dev/lnk/services/harness/model"
)

// The _meta keys every call carries.
const (
	MetaThread = linkmeta.Thread
	MetaHops   = linkmeta.Hops
	MetaTools  = linkmeta.Tools
	MetaModel  = linkmeta.Model
)

// Scope is who a turn's calls are made for.
type Scope struct {
	Thread string
	Hops   int
	// Tools narrows the tools: nil every one; else only those named (as
	// granted, or as offered), so an empty list is none.
	Tools []string
	// Model is the model the turn runs on, sent in every call's _meta
	// (a subagent started from the turn runs on it unless it names one).
	Model string
}

// Turn is one turn's use of the tools: what it offers and the sessions
// its calls opened, all ended by End but memory's.
type Turn struct {
	s      *Set
	scope  Scope
	names  []string // the granted names of the turn's tools: _meta link.local/tools
	offers []offer
	byName map[string]offer
	tools  map[string]*toolState // by offered name

	mu       sync.Mutex
	sessions map[string]*mcp.ClientSession // opened by this turn, by tool
	failed   map[string]error              // tools that failed to start in this turn
	ended    bool                          // End was called: no session opens again
}

// Begin starts a turn: each tool in scope listed where its list is old
// (each tool at once, each within StartTimeout), and the offers made.
func (s *Set) Begin(ctx context.Context, sc Scope) *Turn {
	t := &Turn{s: s, scope: sc, byName: map[string]offer{}, tools: map[string]*toolState{},
		sessions: map[string]*mcp.ClientSession{}, failed: map[string]error{}}
	var in []*toolState
	for _, ts := range s.tools {
		if inScope(ts, sc.Tools) {
			in = append(in, ts)
			t.names = append(t.names, ts.name)
		}
	}
	lists := make([][]offer, len(in))
	ok := make([]bool, len(in))
	var wg sync.WaitGroup
	for i, ts := range in {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i], ok[i] = s.refresh(ctx, ts)
		}()
	}
	wg.Wait()
	var all []offer
	for i, ts := range in {
		if ok[i] {
			t.tools[ts.short] = ts
			all = append(all, lists[i]...)
		}
	}
	for _, o := range capTotal(all, s.logOnce) {
		if _, dup := t.byName[o.Name]; dup {
			continue // toolOffers and the tools' names keep names apart; never two
		}
		t.byName[o.Name] = o
		t.offers = append(t.offers, o)
	}
	sort.Strings(t.names)
	return t
}

// inScope reports whether ts is one of the tools named (nil: every tool).
func inScope(ts *toolState, names []string) bool {
	if names == nil {
		return true
	}
	for _, n := range names {
		if n == ts.name || n == ts.short {
			return true
		}
	}
	return false
}

// Offers are the calls the model is offered in this turn.
func (t *Turn) Offers() []model.Tool {
	out := make([]model.Tool, len(t.offers))
	for i, o := range t.offers {
		out[i] = o.Tool
	}
	return out
}

// Offered reports whether name is offered in this turn.
func (t *Turn) Offered(name string) bool { _, ok := t.byName[name]; return ok }

// ToolOf is the offered name of the tool a call goes to ("" for a name
// not offered).
func (t *Turn) ToolOf(name string) string { return t.byName[name].tool }

// Names are the granted names of the turn's tools, as _meta says them.
func (t *Turn) Names() []string { return t.names }

// Result is a call's answer.
type Result struct {
	Tool    string // the tool's offered name; "" for a name not offered
	Text    string // the tool's words (or the harness's, saying why it made no call)
	IsError bool
	// Sent reports whether the call reached the tool.
	Sent bool
}

// Call makes one call the model asked for. A name not offered is
// answered as an error and sent nowhere; so are arguments that are not a
// JSON object.
func (t *Turn) Call(ctx context.Context, c model.ToolCall) Result {
	o, ok := t.byName[c.Name]
	if !ok {
		if tool := t.outOfScope(c.Name); tool != "" {
			t.s.logf("tools: refused %s in conversation %s: %s is not among its tools", c.Name, t.scope.Thread, tool)
			return Result{IsError: true, Text: fmt.Sprintf("the tool %s is not among this conversation's tools (a subagent has its parent's tools or fewer): %q was not called", tool, c.Name)}
		}
		return Result{IsError: true, Text: fmt.Sprintf("no tool call %q is offered in this turn: nothing was called", c.Name)}
	}
	args, err := arguments(c.Arguments)
	if err != nil {
		return Result{Tool: o.tool, IsError: true, Text: err.Error()}
	}
	ts := t.tools[o.tool]
	cs, err := t.session(ctx, ts)
	if err != nil {
		// Not sent: the turn logs it, once.
		return Result{Tool: o.tool, IsError: true, Text: err.Error()}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Meta:      t.meta(),
		Name:      o.call,
		Arguments: args,
	})
	if err != nil {
		err = scrub(err, ts.url)
		if t.s.mem != nil && ts == t.s.mem.tool {
			t.s.mem.failed(cs, err.Error())
		}
		t.s.logf("tools: %s: call %s failed: %v", o.tool, o.call, err)
		return Result{Tool: o.tool, IsError: true, Sent: true, Text: fmt.Sprintf("the call to %s failed: %v", c.Name, err)}
	}
	return Result{Tool: o.tool, IsError: res.IsError, Sent: true, Text: resultText(res)}
}

// meta is every call's _meta: the conversation, its hops, the granted
// names of its tools (never null: [] is none) and its model.
func (t *Turn) meta() mcp.Meta {
	names := t.names
	if names == nil {
		names = []string{}
	}
	m := mcp.Meta{MetaThread: t.scope.Thread, MetaHops: t.scope.Hops, MetaTools: names}
	if t.scope.Model != "" {
		m[MetaModel] = t.scope.Model
	}
	return m
}

// outOfScope is the short name of the agent's tool a call's name goes to
// when the turn's scope leaves that tool out ("" when it names none).
func (t *Turn) outOfScope(call string) string {
	if t.scope.Tools == nil {
		return ""
	}
	short, _, ok := strings.Cut(call, Sep)
	if !ok {
		return ""
	}
	for _, ts := range t.s.tools {
		if ts.short == short && !inScope(ts, t.scope.Tools) {
			return ts.short
		}
	}
	return ""
}

// session is the turn's session with ts, opened at its first call (a
// tool that fails to start is left out of the rest of the turn); memory's
// is the Set's kept one.
func (t *Turn) session(ctx context.Context, ts *toolState) (*mcp.ClientSession, error) {
	if t.s.mem != nil && ts == t.s.mem.tool {
		cs, err := t.s.mem.session(ctx)
		if err != nil {
			return nil, errLeftOut(ts.short, err)
		}
		return cs, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil, fmt.Errorf("the turn has ended")
	}
	if err := t.failed[ts.short]; err != nil {
		return nil, errLeftOut(ts.short, err)
	}
	if cs := t.sessions[ts.short]; cs != nil {
		return cs, nil
	}
	cs, err := t.s.sessionFor(ctx, ts)
	if err != nil {
		t.failed[ts.short] = err
		return nil, errLeftOut(ts.short, err)
	}
	t.sessions[ts.short] = cs
	return cs, nil
}

// End ends every session the turn opened (memory's is kept): no call
// is made in them after it. Each session's end (the DELETE that tells the
// tool) is sent as End returns, not waited for, so the turn's answer
// never waits on a tool's goodbye; End's caller can Wait for them.
func (t *Turn) End() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, cs := range t.sessions {
		t.s.ending.Add(1)
		go func() {
			defer t.s.ending.Done()
			cs.Close()
		}()
		delete(t.sessions, name)
	}
	t.ended = true
}

// arguments are a call's arguments as a JSON object ({} for none).
func arguments(raw json.RawMessage) (json.RawMessage, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return json.RawMessage(`{}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("the call's arguments are not a JSON object: nothing was called")
	}
	return json.RawMessage(s), nil
}

// resultText is a call's answer as text: its text content, and a line
// naming each other kind of content.
func resultText(r *mcp.CallToolResult) string {
	if len(r.Content) == 1 {
		// One text, the common answer (a page, a file): as the client
		// decoded it, not copied again. An empty one still gives way to
		// the structured content below.
		if v, ok := r.Content[0].(*mcp.TextContent); ok && (v.Text != "" || r.StructuredContent == nil) {
			return v.Text
		}
	}
	var b strings.Builder
	for _, c := range r.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch v := c.(type) {
		case *mcp.TextContent:
			b.WriteString(v.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[an image, %s, %d bytes]", v.MIMEType, len(v.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio, %s, %d bytes]", v.MIMEType, len(v.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[a resource link: %s]", v.URI)
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				b.WriteString(v.Resource.Text)
			} else {
				b.WriteString("[an embedded resource]")
			}
		default:
			b.WriteString("[content of another kind]")
		}
	}
	if b.Len() == 0 && r.StructuredContent != nil {
		if j, err := json.Marshal(r.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	return b.String()
}
