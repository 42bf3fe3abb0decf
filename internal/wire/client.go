package wire

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Client makes calls on one channel; it is safe for concurrent use and
// may have many calls in flight.
//
// There is no reader goroutine: a caller reads the channel itself. One
// caller at a time holds the reader's turn (rd) and reads records in a
// blocking recvmsg until its own reply comes, handing each other
// caller's reply to it on the way; it then passes the turn on to a
// caller still waiting, if any. A lone caller so sends, reads its reply
// and returns on one thread, without a goroutine hand-off. A watcher
// goroutine (watch.go) waits in poll(2) for the channel's end only, so a
// dead peer fails every waiting call and closes Done even with no call
// reading.
type Client struct {
	c   *conn
	efd int // eventfd that wakes a reader whose call's context ended

	// rd is the reader's turn: whoever holds its one slot may read.
	// Acquired by sending, released by receiving, so that a waiting
	// caller can select on it beside its reply and its context.
	rd chan struct{}

	mu      sync.Mutex
	next    uint64
	pending map[uint64]*call // guarded by mu; a nil value is a call given up
	err     error            // guarded by mu; why the channel died
	done    chan struct{}    // closed when the watcher has returned
}

type call struct {
	spec Spec
	res  chan result // buffered: a reader never waits on it
}

// calls recycles calls: a call is freed only once nothing can send to
// it (its reply taken from res, or read by its own caller), so a
// recycled res is always empty.
var calls = sync.Pool{New: func() any { return &call{res: make(chan result, 1)} }}

func newCall(spec Spec) *call {
	ca := calls.Get().(*call)
	ca.spec = spec
	return ca
}

func (ca *call) free() { calls.Put(ca) }

// result is a reply handed to its caller by another caller's read: the
// body is a copy and the fds are the caller's.
type result struct {
	rec Record
	fds []int
	err error
}

// NewClient takes ownership of f (a SOCK_SEQPACKET socket).
func NewClient(f *os.File) (*Client, error) {
	c, err := newConn(f)
	if err != nil {
		return nil, err
	}
	efd, err := newWaker()
	if err != nil {
		c.release()
		return nil, err
	}
	cl := &Client{c: c, efd: efd, rd: make(chan struct{}, 1), pending: map[uint64]*call{}, done: make(chan struct{})}
	go cl.watch()
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
	var out []*os.File
	err = cl.CallRaw(ctx, spec, body, files, func(r Record, fds []int) error {
		if err := decodeReply(spec, r, resp); err != nil {
			closeFDs(fds)
			return err
		}
		out = fdFiles(fds)
		return nil
	})
	return out, err
}

// CallRaw sends body, an encoded request of spec's type, with files
// beside it (they stay the caller's), and hands the reply to take: its
// body (valid only until take returns) and its bare fds (take's to
// close, spec.ReplyFDs of them, each close-on-exec). take decodes the
// body ([Unmarshal], or [DecodeError] for an error reply, whose kind
// [Record.Kind] says); an error take returns is CallRaw's. It is [Call]
// without a copy of the body or an *os.File per fd: for a caller that
// wants only the fd (lnk-fsbroker's open). take is not called when
// CallRaw fails for another reason ([ErrClosed], ctx's error).
func (cl *Client) CallRaw(ctx context.Context, spec Spec, body []byte, files []*os.File, take func(Record, []int) error) error {
	ca := newCall(spec)
	cl.mu.Lock()
	if cl.err != nil {
		err := cl.err
		cl.mu.Unlock()
		return err
	}
	cl.next++
	id := cl.next
	cl.pending[id] = ca
	cl.mu.Unlock()

	if err := cl.c.send(Record{Kind: KindRequest, Type: spec.Type, ID: id, Body: body}, files); err != nil {
		cl.mu.Lock()
		delete(cl.pending, id)
		cl.mu.Unlock()
		return fmt.Errorf("%s: %w", spec.Name, err)
	}
	select {
	case cl.rd <- struct{}{}: // the reader's turn: read until the reply comes
		select {
		case r := <-ca.res: // handed over before the turn came
			<-cl.rd
			ca.free()
			return cl.finish(spec, r, take)
		default:
		}
		rec, fds, err := cl.lead(ctx, id, ca)
		if err == nil {
			ca.free() // its reply was read here: nothing else sends to it
			err = take(rec, fds)
		}
		<-cl.rd
		return err
	case r := <-ca.res:
		ca.free()
		return cl.finish(spec, r, take)
	case <-ctx.Done():
		return cl.giveUp(ctx, id, ca)
	}
}

// giveUp withdraws call id, whose context ended while it waited.
func (cl *Client) giveUp(ctx context.Context, id uint64, ca *call) error {
	cl.mu.Lock()
	_, waiting := cl.pending[id]
	if waiting {
		cl.pending[id] = nil // its reader closes the reply's fds
	}
	cl.mu.Unlock()
	if !waiting { // a reader has taken it and is handing it over
		r := <-ca.res
		closeFDs(r.fds)
	}
	return ctx.Err()
}

func (cl *Client) finish(spec Spec, r result, take func(Record, []int) error) error {
	if r.err != nil {
		return r.err
	}
	return take(r.rec, r.fds)
}

// decodeReply decodes a reply's body into resp, or an error reply's into
// the [*Error] it returns.
func decodeReply(spec Spec, r Record, resp any) error {
	if r.Kind == KindError {
		return DecodeError(spec, r.Body)
	}
	if resp != nil {
		if err := Unmarshal(r.Body, resp); err != nil {
			return fmt.Errorf("%s: malformed reply: %v", spec.Name, err)
		}
	}
	return nil
}

// DecodeError decodes an error reply's body to spec's request: the
// handler's refusal as an [*Error], or why the body was malformed.
func DecodeError(spec Spec, body []byte) error {
	we := new(Error)
	if err := Unmarshal(body, we); err != nil {
		return fmt.Errorf("%s: malformed error reply: %v", spec.Name, err)
	}
	return we
}
