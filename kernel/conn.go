package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/scmrights"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// maxInFlight caps the requests one connection runs at once; its reader
// waits for a free slot, so a flooding peer slows only itself.
const maxInFlight = 32

// conn is one accepted connection: a blocking SOCK_SEQPACKET socket with
// one reader and a writer lock.
type conn struct {
	k    *Kernel
	f    *os.File
	fd   int
	peer audit.Peer
	// pidfd pins the peer process (SO_PEERPIDFD), nil where the OS
	// lacks it; closed with the connection.
	pidfd *os.File

	smu sync.Mutex
	// starts are the starts this connection made (handleStart): only it
	// ends them, and they are revoked when it closes, however the peer
	// went.
	starts map[uint64]bool
	// ended are the starts of this connection's that the kernel ended
	// (end-agent), with why: its End is then told so, not refused.
	ended map[uint64]string
	// gone is closed once the reader has stopped: the peer went, broke
	// the protocol, or the kernel drains. A Watch waits on it.
	gone chan struct{}

	wmu      sync.Mutex // serialises answers
	inflight sync.WaitGroup
	sem      chan struct{}
	sdOnce   sync.Once
}

// stopReading shuts the socket for reading: what the peer sent before is
// still read (and answered "stopping"); the reader then sees the end.
// Answers can still be written.
func (c *conn) stopReading() { c.sdOnce.Do(func() { unix.Shutdown(c.fd, unix.SHUT_RD) }) }

// serve reads and dispatches records until the peer goes, breaks the
// protocol, or the kernel drains; then it waits for the requests in
// flight to be answered and closes the socket.
func (c *conn) serve(ctx context.Context) {
	defer func() {
		close(c.gone)
		c.waitInFlight()
		c.endStarts()
		c.f.Close()
		if c.pidfd != nil {
			c.pidfd.Close()
		}
	}()
	buf := make([]byte, wire.MaxRecord+1)
	oob := make([]byte, scmrights.Space(wire.MaxFDs))
	for {
		rec, files, err := c.recv(buf, oob)
		if err != nil {
			if errors.Is(err, wire.ErrProtocol) {
				c.k.refuse(audit.Entry{Peer: &c.peer, Reason: "connection closed: " + err.Error()})
			}
			return
		}
		rt, body, err := decodeRequest(c.k.routes, rec)
		if err != nil {
			wire.CloseFiles(files)
			c.k.refuse(audit.Entry{Peer: &c.peer, Request: nameOf(rt), Reason: "connection closed: " + err.Error()})
			return
		}
		if c.k.draining.Load() {
			wire.CloseFiles(files)
			c.answer(rec, nil, wire.Errorf(proto.CodeStopping, "the kernel is stopping"), nil)
			continue
		}
		c.k.requests.Add(1)
		cl := &call{conn: c, id: rec.ID, files: files}
		if rt.inline {
			c.k.dispatch(ctx, rt, rec, cl, body)
			continue
		}
		c.sem <- struct{}{}
		c.inflight.Add(1)
		go func() {
			defer func() { <-c.sem; c.inflight.Done() }()
			c.k.dispatch(ctx, rt, rec, cl, body)
		}()
	}
}

// waitInFlight waits for this connection's handlers, at most until the
// kernel's drain bound; past it the socket is shut so nothing hangs.
func (c *conn) waitInFlight() {
	done := make(chan struct{})
	go func() { c.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-c.k.drainExpired:
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
		<-done
	}
}

// addStart ties start to this connection.
func (c *conn) addStart(start uint64) {
	c.smu.Lock()
	c.starts[start] = true
	c.smu.Unlock()
}

// takeStart unties start from this connection, reporting whether it was
// one of its own.
func (c *conn) takeStart(start uint64) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	ok := c.starts[start]
	delete(c.starts, start)
	return ok
}

// markEnded unties start from this connection as the kernel ends it,
// remembering why for the connection's own End.
func (c *conn) markEnded(start uint64, why string) {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.starts[start] {
		delete(c.starts, start)
		if c.ended == nil {
			c.ended = map[uint64]string{}
		}
		c.ended[start] = why
	}
}

// endedWhy is why the kernel ended start, a start of this connection's,
// or "" if it did not; it stays for End.
func (c *conn) endedWhy(start uint64) string {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.ended[start]
}

// takeEnded returns why the kernel ended start, a start of this
// connection's, once; "" if it did not.
func (c *conn) takeEnded(start uint64) string {
	c.smu.Lock()
	defer c.smu.Unlock()
	why := c.ended[start]
	delete(c.ended, start)
	return why
}

// endStarts revokes every start this connection made and did not end:
// its peer is gone, and no start outlives the process that made it.
func (c *conn) endStarts() {
	c.smu.Lock()
	starts := c.starts
	c.starts = map[uint64]bool{}
	c.smu.Unlock()
	for start := range starts {
		agent, _ := c.k.caps.Agent(start)
		n := c.k.endStart(start)
		c.k.record(audit.Entry{Kind: audit.KindRevoke, Peer: &c.peer, Agent: agent, Start: start, Count: n, Reason: "the connection that made the start closed"})
	}
}

func nameOf(rt *route) string {
	if rt == nil {
		return ""
	}
	return rt.spec.Name
}

// recv reads one record through the one SCM_RIGHTS receiver
// (internal/scmrights). Any violation closes every fd that came with it.
func (c *conn) recv(buf, oob []byte) (wire.Record, []*os.File, error) {
	n, fds, err := scmrights.Recv(c.fd, buf, oob, nil, wire.MaxFDs, 0)
	var ref *scmrights.Refusal
	switch {
	case errors.As(err, &ref):
		return wire.Record{}, nil, fmt.Errorf("%w: %s", wire.ErrProtocol, ref.Reason)
	case err != nil:
		return wire.Record{}, nil, fmt.Errorf("%w: %v", wire.ErrClosed, err)
	case n == 0 && len(fds) == 0:
		return wire.Record{}, nil, wire.ErrClosed
	}
	var rec wire.Record
	if n > wire.MaxRecord {
		err = fmt.Errorf("%w: record over the %d-byte cap", wire.ErrProtocol, wire.MaxRecord)
	} else {
		rec, err = wire.ParseRecord(buf[:n], len(fds))
	}
	if err != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return wire.Record{}, nil, err
	}
	rec.Body = append([]byte(nil), rec.Body...)
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "request-fd")
	}
	return rec, files, nil
}

// decodeRequest finds rec's route in routes and decodes its body
// strictly. Every error is a [wire.ErrProtocol] violation.
func decodeRequest(routes map[wire.Type]*route, rec wire.Record) (*route, any, error) {
	if rec.Kind != wire.KindRequest {
		return nil, nil, fmt.Errorf("%w: a record of kind %d where a request belongs", wire.ErrProtocol, rec.Kind)
	}
	rt, ok := routes[rec.Type]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown request type %d", wire.ErrProtocol, rec.Type)
	}
	if !rt.spec.States.Has(proto.StateServing) {
		return rt, nil, fmt.Errorf("%w: %s is not permitted now", wire.ErrProtocol, rt.spec.Name)
	}
	fdsOK := rec.NFD == rt.spec.FDs || (rt.spec.MaxFDs > rt.spec.FDs && rec.NFD >= rt.spec.FDs && rec.NFD <= rt.spec.MaxFDs)
	if !fdsOK {
		return rt, nil, fmt.Errorf("%w: %s carries %d fds", wire.ErrProtocol, rt.spec.Name, rec.NFD)
	}
	body, err := rt.decode(rec.Body)
	if err != nil {
		return rt, nil, fmt.Errorf("%w: %s: %v", wire.ErrProtocol, rt.spec.Name, err)
	}
	return rt, body, nil
}

// answer writes a reply (or, with err, an error reply) to rec. The
// files stay the caller's.
func (c *conn) answer(rec wire.Record, resp any, err error, files []*os.File) error {
	r := wire.Record{Kind: wire.KindReply, Type: rec.Type, ID: rec.ID}
	if err == nil {
		r.Body, err = wire.Marshal(resp)
	}
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) {
			we = &wire.Error{Code: proto.CodeFailed, Message: err.Error()}
		}
		r.Kind = wire.KindError
		r.Body, _ = wire.Marshal(&wire.Error{Code: we.Code, Message: err.Error()})
		files = nil
	}
	r.NFD = len(files)
	b, aerr := wire.AppendRecord(nil, r)
	if aerr != nil {
		return aerr
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for {
		err = unix.Sendmsg(c.fd, b, oob, nil, unix.MSG_NOSIGNAL)
		if err != unix.EINTR {
			break
		}
	}
	runtime.KeepAlive(files)
	return err
}
