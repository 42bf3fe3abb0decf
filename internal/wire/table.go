package wire

import (
	"context"
	"fmt"
	"os"
)

// Flags change how a table treats a request type.
type Flags uint8

const (
	// Once: permitted at most once per channel. A Once request is also
	// served before the next record is read, so a state it sets holds
	// for every record after it.
	Once Flags = 1 << iota
	// Inline: served on the reader's own goroutine, saving a goroutine
	// hand-off per request, for handlers that return without blocking
	// (the fsbroker's open: its resolver never waits). The channel reads
	// nothing else meanwhile.
	Inline
)

// State is a channel's state, 0–31; a server starts in state 0.
type State uint8

// StateSet is a set of states; the zero set permits nothing.
type StateSet uint32

// In returns the set of the given states.
func In(states ...State) StateSet {
	var s StateSet
	for _, st := range states {
		s |= 1 << st
	}
	return s
}

// AnyState permits a request in every state.
const AnyState StateSet = ^StateSet(0)

// Has reports whether st is in s.
func (s StateSet) Has(st State) bool { return st < 32 && s&(1<<st) != 0 }

// Spec is what both sides know of a request type.
type Spec struct {
	Type Type
	Name string
	// FDs is how many fds the request carries; with MaxFDs > FDs it
	// carries from FDs to MaxFDs of them.
	FDs, MaxFDs int
	// ReplyFDs is how many fds a successful reply carries.
	ReplyFDs int
	Flags    Flags
	// States are the channel states the request is permitted in.
	States StateSet
}

func (s Spec) fdsOK(n int) bool {
	if s.MaxFDs > s.FDs {
		return n >= s.FDs && n <= s.MaxFDs
	}
	return n == s.FDs
}

// Request is a decoded request as a handler sees it. A handler must not
// keep it after returning: the server reuses it for the next [Inline]
// request.
type Request struct {
	Spec Spec
	ID   uint64
	// Files arrived with the request. The server closes them after the
	// handler returns, except those the handler set to nil (taken).
	Files []*os.File
	srv   *Server
	fds   []int  // bare fds to send beside the reply, after its files ([Request.ReplyFD])
	after func() // run once the reply is written ([Request.After])
}

// After makes fn run once this request's reply has been written (or its
// writing failed): the kernel's stop request stops the kernel only after
// its answer is on its way.
func (r *Request) After(fn func()) { r.after = fn }

// ReplyFD hands the server a bare descriptor to send beside the reply,
// after the files the handler returns, and to close once sent (or if the
// handler fails). It saves wrapping an fd in an *os.File only to send it
// (os.NewFile costs a fcntl, and an epoll_ctl for a non-blocking fd). The
// fds and files together must number Spec.ReplyFDs.
func (r *Request) ReplyFD(fd int) { r.fds = append(r.fds, fd) }

func (r *Request) closeFDs() {
	closeFDs(r.fds)
	r.fds = r.fds[:0]
}

// SetState moves the channel to st; records read after this request's
// handler returns see the new state when the request is [Once].
func (r *Request) SetState(st State) { r.srv.state.Store(uint32(st)) }

// Route is one row of a server's request table. Make it with [Handle].
type Route struct {
	Spec
	decode func(body []byte) (any, error)
	serve  func(ctx context.Context, req *Request, body any) (any, []*os.File, error)
}

// Handle makes a route: fn gets the strictly decoded request and returns
// the reply and the files to send beside it (the server closes them once
// sent; a reply must carry exactly Spec.ReplyFDs of them).
func Handle[Req, Resp any](spec Spec, fn func(ctx context.Context, r *Request, req *Req) (*Resp, []*os.File, error)) Route {
	return Route{
		Spec: spec,
		decode: func(body []byte) (any, error) {
			v := new(Req)
			if err := Unmarshal(body, v); err != nil {
				return nil, err
			}
			return v, nil
		},
		serve: func(ctx context.Context, r *Request, body any) (any, []*os.File, error) {
			resp, files, err := fn(ctx, r, body.(*Req))
			if err != nil {
				CloseFiles(files)
				r.closeFDs()
				return nil, nil, err
			}
			if n := len(files) + len(r.fds); n != spec.ReplyFDs {
				CloseFiles(files)
				r.closeFDs()
				return nil, nil, fmt.Errorf("%s: handler returned %d fds, its spec says %d", spec.Name, n, spec.ReplyFDs)
			}
			return resp, files, nil
		},
	}
}

// DecodeRequest parses one datagram that arrived with nfd fds against a
// table, as a server does before any handler runs: the record, the type
// (known; permitted in state st; fd count right) and the body (strict).
// Any error is an [ErrProtocol] violation.
func DecodeRequest(routes map[Type]*Route, b []byte, nfd int, st State) (Record, *Route, any, error) {
	rec, err := ParseRecord(b, nfd)
	if err != nil {
		return Record{}, nil, nil, err
	}
	rt, body, err := checkRequest(routes, rec, st)
	return rec, rt, body, err
}

func checkRequest(routes map[Type]*Route, rec Record, st State) (*Route, any, error) {
	if rec.Kind != KindRequest {
		return nil, nil, violation("a record of kind %d where a request belongs", rec.Kind)
	}
	rt, ok := routes[rec.Type]
	if !ok {
		return nil, nil, violation("unknown request type %d", rec.Type)
	}
	if !rt.States.Has(st) {
		return nil, nil, violation("request %s is not permitted in state %d", rt.Name, st)
	}
	if !rt.fdsOK(rec.NFD) {
		return nil, nil, violation("request %s carries %d fds", rt.Name, rec.NFD)
	}
	body, err := rt.decode(rec.Body)
	if err != nil {
		return nil, nil, violation("request %s: %v", rt.Name, err)
	}
	return rt, body, nil
}

// Table indexes routes by type; a type given twice panics (a table is
// code, and a duplicate is a bug).
func Table(routes ...Route) map[Type]*Route {
	m := make(map[Type]*Route, len(routes))
	for i := range routes {
		r := &routes[i]
		if _, dup := m[r.Type]; dup {
			panic(fmt.Sprintf("wire: request type %d (%s) given twice", r.Type, r.Name))
		}
		if r.decode == nil {
			panic(fmt.Sprintf("wire: route %s not made with Handle", r.Name))
		}
		m[r.Type] = r
	}
	return m
}
