package mcpstdio

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcptext"
)

// Tools are the calls a server answers on the fast path
// ([Transport.SetFast]).
type Tools struct {
	Server *mcp.Server // the go-sdk server of the session, which initializes it
	Names  []string    // the tools offered
	// Call runs one call, as the server's own handler of that tool does.
	Call func(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult
	// OneAtATime runs the calls in the order taken, on one goroutine
	// while there are any (a server whose calls run one at a time
	// anyway), whose stack grows to a call's depth once rather than at
	// every call; else each call runs on a goroutine of its own.
	OneAtATime bool
	// CancelAtEnd cancels the calls still running when the session ends,
	// as the go-sdk cancels its own; else each runs to its answer (a
	// client that wrote its calls and closed its side is answered).
	CancelAtEnd bool
}

// fastCalls answers the one message a session sends over and over — a
// plain tools/call of an offered tool — without the go-sdk server, to the
// same bytes the go-sdk would write (the file tool's
// TestFastCallsAreTheGoSDKs, the web's TestFastFetchIsTheGoSDKs). The
// go-sdk decodes such a call four times over, each decode with a 32 KiB
// buffer of its own, runs it on a goroutine of its own through its
// middleware and encodes the result again with reflection, and its
// encoding of the message compacts the result once more: for a small
// answer about half the server's CPU, for a page's a third. Every other
// message, and any call it is not sure of, goes to the go-sdk, which
// stays the protocol's reference.
//
// A call is taken only in a session the go-sdk initialized, to a
// protocol with no resultType (as [mcptext.Plain]), after the client said
// notifications/initialized; and only in its plainest spelling
// ([plainCall]: FuzzPlainCall holds it to the go-sdk's decoding). It
// takes the connection's gate slot of the read that found it, given back
// once it is answered.
//
// Like the go-sdk, it runs its calls off the goroutine that reads, so a
// call can be cancelled by notifications/cancelled (which still goes to
// the go-sdk too), and answers each even after the client has gone.
type fastCalls struct {
	tools Tools

	// The reading goroutine's alone (the go-sdk reads from one).
	initialized bool               // the client said notifications/initialized
	session     *mcp.ServerSession // found once initialized

	mu       sync.Mutex
	inFlight map[jsonrpc.ID]context.CancelFunc
	queue    []fastCall // taken, not yet run (OneAtATime)
	working  bool       // a worker runs the queue
	closed   bool       // the connection closed: take no more
	wg       sync.WaitGroup
}

// fastCall is one call taken.
type fastCall struct {
	c    *Conn
	ctx  context.Context
	id   jsonrpc.ID
	name string
	args json.RawMessage
}

func newFastCalls(tools Tools) *fastCalls {
	return &fastCalls{tools: tools, inFlight: map[jsonrpc.ID]context.CancelFunc{}}
}

// take runs line as a fast call, answering it on c, and says whether it
// did; a line it does not take is left to the go-sdk, untouched.
func (f *fastCalls) take(c *Conn, line []byte) bool {
	if !f.ready() {
		return false
	}
	id, name, args, ok := plainCall(line, f.tools.Names)
	if !ok || c.gate.isOpen(id) {
		return false // an id the go-sdk has open: it says what it says of that
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.inFlight[id]; dup || f.closed {
		return false // an id in use, or a session ending: the go-sdk says what it says of that
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.inFlight[id] = cancel
	fc := fastCall{c: c, ctx: ctx, id: id, name: name, args: args}
	f.wg.Add(1)
	if !f.tools.OneAtATime {
		go f.run(fc)
		return true
	}
	f.queue = append(f.queue, fc)
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
		res = f.tools.Call(fc.ctx, fc.name, fc.args)
	}
	f.mu.Lock()
	cancel := f.inFlight[fc.id]
	delete(f.inFlight, fc.id) // before the answer: the client may use the id again once it has it
	f.mu.Unlock()
	cancel()
	resp := &jsonrpc.Response{ID: fc.id, Error: cancelled}
	if cancelled == nil {
		body, err := (mcptext.Result{CallToolResult: res}).MarshalJSON()
		if err != nil {
			// As the go-sdk: a result it cannot encode is answered
			// with the error.
			resp.Error = err
		}
		resp.Result = body
	}
	// As the go-sdk: an answer that cannot be written is dropped. Its
	// slot is given back all the same.
	_ = fc.c.write(resp, true)
}

// ready says whether the session takes fast calls: initialized by the
// go-sdk, to a protocol with no resultType, and the client said so.
func (f *fastCalls) ready() bool {
	if !f.initialized {
		return false
	}
	if f.session == nil {
		for ss := range f.tools.Server.Sessions() {
			f.session = ss
			break
		}
		if f.session == nil {
			return false
		}
	}
	return mcptext.PlainProtocol(f.session.InitializeParams())
}

// saw notes a message the go-sdk is given: notifications/initialized
// opens the fast path; notifications/cancelled cancels a fast call.
func (f *fastCalls) saw(msg jsonrpc.Message) {
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

// close takes no more calls, cancels those running where the tools say
// so, and waits for those taken to be answered.
func (f *fastCalls) close() {
	f.mu.Lock()
	f.closed = true
	if f.tools.CancelAtEnd {
		for _, cancel := range f.inFlight {
			cancel()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}
