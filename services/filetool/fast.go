package filetool

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcpstdio"
	"lnk.dev/lnk/internal/mcptext"
)

// fastCalls answers the one message a session sends over and over — a
// plain tools/call of an offered tool — without the go-sdk server, to the
// same bytes the go-sdk would write (TestFastCallsAreTheGoSDKs). The
// go-sdk decodes such a call four times over, each decode with a 32 KiB
// buffer of its own, runs it on a goroutine of its own through its
// middleware and encodes the result again with reflection: about half of
// serve's CPU a 4 KiB read. Every other message, and any call it is not
// sure of, goes to the go-sdk, which stays the protocol's reference.
//
// A call is taken only in a session the go-sdk initialized, to a
// protocol with no resultType (as [mcptext.Plain]), after the client said
// notifications/initialized; and only in its plainest spelling: the keys
// jsonrpc ("2.0"), id (an integer float64 holds exactly, or a string of
// printable ASCII without escapes), method ("tools/call") and params,
// each once; params of name (an offered tool) and arguments only, no
// _meta; nesting the go-sdk's depth cap cannot reach.
//
// Like the go-sdk, it runs its calls off the goroutine that reads, so a
// call can be cancelled by notifications/cancelled (which still goes to
// the go-sdk too), and answers each even after the client has gone.
type fastCalls struct {
	o      Offer
	names  []string // the offer's tools
	sb     *Sandboxed
	server *mcp.Server

	// Read's goroutine alone (the go-sdk reads from one).
	initialized bool               // the client said notifications/initialized
	session     *mcp.ServerSession // found once initialized

	mu       sync.Mutex
	inFlight map[jsonrpc.ID]context.CancelFunc
	queue    []fastCall // taken, not yet run
	working  bool       // a worker runs the queue
	closed   bool       // the connection closed: take no more
	wg       sync.WaitGroup
}

// fastCall is one call taken.
type fastCall struct {
	c    *mcpstdio.Conn
	ctx  context.Context
	id   jsonrpc.ID
	name string
	args json.RawMessage
}

func newFastCalls(o Offer, sb *Sandboxed, server *mcp.Server) *fastCalls {
	f := &fastCalls{o: o, sb: sb, server: server, inFlight: map[jsonrpc.ID]context.CancelFunc{}}
	for _, t := range o.Tools() {
		f.names = append(f.names, t.name)
	}
	return f
}

// Take runs line as a fast call, answering it on c, and says whether it
// did (the transport's [mcpstdio.Taker]); a line it does not take is left to the go-sdk, untouched. The
// calls run in the order taken, on one worker goroutine while there are
// any (the sandboxed process runs them one at a time anyway), whose stack
// grows to a call's depth once rather than at every call.
func (f *fastCalls) Take(c *mcpstdio.Conn, line []byte) bool {
	if !f.ready() {
		return false
	}
	id, name, args, ok := plainCall(line, f.names)
	if !ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.inFlight[id]; dup || f.closed {
		return false // an id in use, or a session ending: the go-sdk says what it says of that
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.inFlight[id] = cancel
	f.queue = append(f.queue, fastCall{c: c, ctx: ctx, id: id, name: name, args: args})
	f.wg.Add(1)
	if !f.working {
		f.working = true
		go f.work()
	}
	return true
}

// work runs the queue until it is empty.
func (f *fastCalls) work() {
	for {
		f.mu.Lock()
		if len(f.queue) == 0 {
			f.working = false
			f.queue = nil
			f.mu.Unlock()
			return
		}
		fc := f.queue[0]
		f.queue[0] = fastCall{}
		f.queue = f.queue[1:]
		f.mu.Unlock()
		f.run(fc)
	}
}

// run runs one call and answers it; one cancelled before it ran is
// answered with the error, as the go-sdk answers it.
func (f *fastCalls) run(fc fastCall) {
	defer f.wg.Done()
	var res *mcp.CallToolResult
	cancelled := fc.ctx.Err()
	if cancelled == nil {
		res = callResult(fc.ctx, f.o, f.sb, fc.name, fc.args)
	}
	f.mu.Lock()
	cancel := f.inFlight[fc.id]
	delete(f.inFlight, fc.id) // before the answer: the client may use the id again once it has it
	f.mu.Unlock()
	cancel()
	var err error
	if cancelled != nil {
		err = fc.c.Write(context.Background(), &jsonrpc.Response{ID: fc.id, Error: cancelled})
	} else if body, merr := (mcptext.Result{CallToolResult: res}).MarshalJSON(); merr == nil {
		err = fc.c.WriteResult(fc.id, body)
	}
	_ = err // as the go-sdk: an answer that cannot be written is dropped
}

// ready says whether the session takes fast calls: initialized by the
// go-sdk, to a protocol with no resultType, and the client said so.
func (f *fastCalls) ready() bool {
	if !f.initialized {
		return false
	}
	if f.session == nil {
		for ss := range f.server.Sessions() {
			f.session = ss
			break
		}
		if f.session == nil {
			return false
		}
	}
	return mcptext.PlainProtocol(f.session.InitializeParams())
}

// Saw notes a message the go-sdk is given: notifications/initialized
// opens the fast path; notifications/cancelled cancels a fast call.
func (f *fastCalls) Saw(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() {
		return
	}
	switch req.Method {
	case "notifications/initialized":
		f.initialized = true
	case "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		id, err := jsonrpc.MakeID(p.RequestID) // as the go-sdk makes it
		if err != nil {
			return
		}
		f.mu.Lock()
		cancel := f.inFlight[id]
		f.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// Close takes no more calls and waits for those taken to be answered.
func (f *fastCalls) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}
