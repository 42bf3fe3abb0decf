package mcpstdio

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate reads no message while its number of tools/call requests are
// read and unanswered: a client that sends calls without end waits in
// its own pipe, and the server holds at most that many calls' work at
// once. A slot is taken before each read and given back at once unless
// what was read is a call; a call's slot is given back when its answer is
// written. A nil gate holds nothing back.
type gate struct {
	slots chan struct{}

	mu   sync.Mutex
	open map[jsonrpc.ID]bool // the calls handed to the go-sdk and not yet answered
}

func newGate(calls int) *gate {
	if calls <= 0 {
		return nil
	}
	return &gate{slots: make(chan struct{}, calls), open: map[jsonrpc.ID]bool{}}
}

// enter takes a slot before a read, waiting while none is free.
func (g *gate) enter(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave gives a slot back: what was read is no call, or a call answered.
func (g *gate) leave() {
	if g != nil {
		<-g.slots
	}
}

// handed is told of what the read handed to the go-sdk: a call under an
// id not open keeps its slot until its answer is written; anything else
// gives it back. A call under an id already open the go-sdk refuses
// unrun, its error answered under no id, so it takes no slot of its own.
func (g *gate) handed(msg jsonrpc.Message, err error) {
	if g == nil {
		return
	}
	if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.Method == "tools/call" && req.ID.IsValid() {
		g.mu.Lock()
		if !g.open[req.ID] {
			g.open[req.ID] = true
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
	}
	g.leave()
}

// answered is told of a message the go-sdk wrote: the answer to a call
// it was handed gives that call's slot back.
func (g *gate) answered(msg jsonrpc.Message) {
	if g == nil {
		return
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[resp.ID] {
		delete(g.open, resp.ID)
		<-g.slots
	}
}

// isOpen says whether a call under id was handed to the go-sdk and is
// not yet answered.
func (g *gate) isOpen(id jsonrpc.ID) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open[id]
}

// Gate is t holding at most calls tools/call requests read and
// unanswered at once (calls ≤ 0: t as it is). On Link's own transport
// the gate is its own, counting the fast path's calls too
// ([Transport.SetMaxCalls]); any other transport's connection is wrapped.
func Gate(t mcp.Transport, calls int) mcp.Transport {
	if calls <= 0 {
		return t
	}
	if lt, ok := t.(*Transport); ok {
		lt.SetMaxCalls(calls)
		return lt
	}
	return &gateTransport{inner: t, calls: calls}
}

// gateTransport is another transport under a gate.
type gateTransport struct {
	inner mcp.Transport
	calls int
}

func (g *gateTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gateConn{Connection: c, g: newGate(g.calls)}, nil
}

// gateConn is another transport's connection under a gate.
type gateConn struct {
	mcp.Connection
	g *gate
}

func (c *gateConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := c.g.enter(ctx); err != nil {
		return nil, err
	}
	msg, err := c.Connection.Read(ctx)
	c.g.handed(msg, err)
	return msg, err
}

func (c *gateConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	c.g.answered(msg)
	return err
}
