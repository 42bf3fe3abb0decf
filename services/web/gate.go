package web

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate is a transport that reads no message while MaxCalls tools/call
// requests are unanswered: a client that sends calls without end waits
// in its own pipe, and the tool holds at most MaxCalls pages at once.
type gate struct {
	inner mcp.Transport
	calls int // MaxCalls; tests may lower it
}

// Gate wraps t so that at most calls tools/call requests are read and
// unanswered at once (calls ≤ 0: MaxCalls).
func Gate(t mcp.Transport, calls int) mcp.Transport {
	if calls <= 0 {
		calls = MaxCalls
	}
	return &gate{inner: t, calls: calls}
}

func (g *gate) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gateConn{Connection: c, slots: make(chan struct{}, g.calls), open: map[jsonrpc.ID]bool{}}, nil
}

// gateConn takes a slot before each read and gives it back at once
// unless what was read is a call; a call's slot is given back when its
// answer is written.
type gateConn struct {
	mcp.Connection
	slots chan struct{}

	mu   sync.Mutex
	open map[jsonrpc.ID]bool // the calls read and not yet answered
}

func (c *gateConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.Method == "tools/call" && req.ID.IsValid() {
		c.mu.Lock()
		if !c.open[req.ID] {
			c.open[req.ID] = true
			c.mu.Unlock()
			return msg, nil
		}
		// An id already open: the go-sdk refuses the repeat unrun, its
		// error answered under no id, so it takes no slot of its own.
		c.mu.Unlock()
	}
	<-c.slots
	return msg, err
}

func (c *gateConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.open[resp.ID] {
			delete(c.open, resp.ID)
			<-c.slots
		}
		c.mu.Unlock()
	}
	return err
}
