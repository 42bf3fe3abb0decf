package wire

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Client makes calls on one channel; it is safe for concurrent use and
// may have many calls in flight.
type Client struct {
	c *conn

	mu      sync.Mutex
	next    uint64
	pending map[uint64]*call // guarded by mu; a nil value is a call given up
	err     error            // guarded by mu; why the channel died
	done    chan struct{}    // closed when the reader has returned
}

type call struct {
	spec Spec
	res  chan result
}

type result struct {
	rec   Record
	files []*os.File
	err   error
}

// NewClient takes ownership of f (a SOCK_SEQPACKET socket) and starts its
// reader.
func NewClient(f *os.File) (*Client, error) {
	c, err := newConn(f, waitInSyscall)
	if err != nil {
		return nil, err
	}
	cl := &Client{c: c, pending: map[uint64]*call{}, done: make(chan struct{})}
	go cl.read()
	return cl, nil
}

// Close shuts the channel; every waiting call returns [ErrClosed].
func (cl *Client) Close() error {
	cl.c.shutdown()
	<-cl.done
	return nil
}

// Done is closed once the channel has died or been closed.
func (cl *Client) Done() <-chan struct{} { return cl.done }

// Err says why the channel died, or nil while it lives.
func (cl *Client) Err() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.err
}

// Call sends req as a request of spec's type with files beside it (they
// stay the caller's) and decodes the reply into resp (strictly). It
// returns the reply's files (spec.ReplyFDs of them), the handler's
// refusal as an [*Error], [ErrClosed] if the channel died, or ctx's
// error.
func (cl *Client) Call(ctx context.Context, spec Spec, req, resp any, files ...*os.File) ([]*os.File, error) {
	body, err := Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	ca := &call{spec: spec, res: make(chan result, 1)}
	cl.mu.Lock()
	if cl.err != nil {
		err := cl.err
		cl.mu.Unlock()
		return nil, err
	}
	cl.next++
	id := cl.next
	cl.pending[id] = ca
	cl.mu.Unlock()

	if err := cl.c.send(Record{Kind: KindRequest, Type: spec.Type, ID: id, Body: body}, files); err != nil {
		cl.mu.Lock()
		delete(cl.pending, id)
		cl.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	select {
	case r := <-ca.res:
		return cl.finish(spec, r, resp)
	case <-ctx.Done():
		cl.mu.Lock()
		_, waiting := cl.pending[id]
		if waiting {
			cl.pending[id] = nil // the reader closes its files when it comes
		}
		cl.mu.Unlock()
		if !waiting { // the reader has taken it and is handing it over
			r := <-ca.res
			CloseFiles(r.files)
		}
		return nil, ctx.Err()
	}
}

func (cl *Client) finish(spec Spec, r result, resp any) ([]*os.File, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.rec.Kind == KindError {
		we := new(Error)
		if err := Unmarshal(r.rec.Body, we); err != nil {
			return nil, fmt.Errorf("%s: malformed error reply: %v", spec.Name, err)
		}
		return nil, we
	}
	if resp != nil {
		if err := Unmarshal(r.rec.Body, resp); err != nil {
			CloseFiles(r.files)
			return nil, fmt.Errorf("%s: malformed reply: %v", spec.Name, err)
		}
	}
	return r.files, nil
}

// read is the channel's one reader: it matches replies to calls, and on
// any failure fails every waiting call.
func (cl *Client) read() {
	var why error
	for {
		rec, files, err := cl.c.recv()
		if err != nil {
			why = err
			break
		}
		if rec.Kind == KindRequest {
			CloseFiles(files)
			why = violation("a request arrived on a client channel")
			break
		}
		cl.mu.Lock()
		ca, ok := cl.pending[rec.ID]
		delete(cl.pending, rec.ID)
		cl.mu.Unlock()
		if !ok {
			CloseFiles(files)
			why = violation("a reply to id %d, which was never asked", rec.ID)
			break
		}
		if ca == nil { // given up by its caller
			CloseFiles(files)
			continue
		}
		if rec.Type != ca.spec.Type || (rec.Kind == KindReply && len(files) != ca.spec.ReplyFDs) {
			CloseFiles(files)
			why = violation("reply to %s has type %d and %d fds", ca.spec.Name, rec.Type, len(files))
			ca.res <- result{err: fmt.Errorf("%s: %w", ca.spec.Name, why)}
			break
		}
		ca.res <- result{rec: rec, files: files}
	}
	cl.c.shutdown()
	cl.mu.Lock()
	cl.err = fmt.Errorf("%w: %v", ErrClosed, why)
	if errorsIsClosed(why) {
		cl.err = why
	}
	for id, ca := range cl.pending {
		if ca != nil {
			ca.res <- result{err: fmt.Errorf("%s: %w", ca.spec.Name, cl.err)}
		}
		delete(cl.pending, id)
	}
	cl.mu.Unlock()
	cl.c.release()
	close(cl.done)
}
