package filetool

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTransport is t, whose connection answers every call it read
// before it says the client has gone. The go-sdk, told of the end of its
// input, cancels the calls still running and writes no answer to them:
// a client that writes its calls and closes its side (`printf … | lnk-file-tool
// serve …`) would get none. So when the input ends, [drainConn.Read]
// holds the end back until each call handed to the go-sdk has had its
// response written (or failed to be: a client that closed its reading
// side too is not waited for), then says it.
type drainTransport struct{ t mcp.Transport }

func (d drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, pending: map[jsonrpc.ID]bool{}, answered: make(chan struct{}, 1)}, nil
}

// drainConn is one session's connection, counting the calls it read and
// has not yet answered.
type drainConn struct {
	mcp.Connection

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // calls read, not yet answered
	answered chan struct{}       // a token each time a response is written
}

// testHookDrain, if set, is called when the input ended with calls
// still pending, before waiting for them.
var testHookDrain func()

// Read is the next message. At the end of the input, or a line that
// ends the session, it says so once every call read before has been
// answered, or ctx is done.
func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending[req.ID] = true // an id in use twice is refused by the go-sdk with no id: one answer to wait for
			c.mu.Unlock()
		}
		return msg, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	hooked := false
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return nil, err
		}
		if !hooked && testHookDrain != nil {
			hooked = true
			testHookDrain()
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return nil, err
		}
	}
}

// Write writes msg; a response, written or not, answers its call.
func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, r.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}
