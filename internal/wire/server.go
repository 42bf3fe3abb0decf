package wire

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// MaxInFlight caps the requests one server channel runs at once; the
// reader waits for a free slot, so a flooding peer slows only itself.
const MaxInFlight = 32

// Server serves one channel through a request table.
type Server struct {
	c      *conn
	routes map[Type]*Route
	logf   func(format string, a ...any)
	state  atomic.Uint32
	drain  drain
	// onViolation, if set, takes the violation that closed the channel
	// instead of logf (see [Server.OnViolation]).
	onViolation func(err error)
	oneOfMany   bool // the reader neither spins nor locks a thread ([Server.OneOfMany])
}

// NewServer takes ownership of f (a SOCK_SEQPACKET socket) and serves it
// through routes (see [Table]). logf, if not nil, gets one line per
// violation that closed the channel.
func NewServer(f *os.File, routes map[Type]*Route, logf func(format string, a ...any)) (*Server, error) {
	c, err := newConn(f)
	if err != nil {
		return nil, err
	}
	return &Server{c: c, routes: routes, logf: logf}, nil
}

// Close stops Serve: the channel is shut down and Serve returns once the
// handlers in flight have.
func (s *Server) Close() { s.c.shutdown() }

// Serve reads and serves requests until the channel closes, ctx ends or
// the peer breaks the protocol; it returns why (an [ErrClosed] error when
// the peer went or Close was called, an [ErrProtocol] one for a
// violation), after every handler has returned and the socket is closed.
func (s *Server) Serve(ctx context.Context) error {
	// One thread reads and serves Inline requests: it sleeps in recvmsg
	// and is woken there directly, never handed from thread to thread.
	if !s.oneOfMany {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	// With one P, the runtime takes the P from a thread blocked in a
	// system call for 20 µs (sysmon's retake) whenever no other P is
	// idle, and each request then pays a hand-off back. A second P, idle,
	// lets the reader keep its own: fewer context switches and less CPU
	// a request with lnk-fsbroker confined to one CPU (the fsbroker/fs
	// benchmarks). Only a GOMAXPROCS of 1 is raised.
	if runtime.GOMAXPROCS(0) == 1 {
		runtime.GOMAXPROCS(2)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, s.c.shutdown)
	defer func() {
		s.waitDrained(&wg, cancel)
		stop()
		cancel()
		s.c.shutdown()
		wg.Wait()
		s.c.release()
	}()
	sem := make(chan struct{}, MaxInFlight)
	used := map[Type]bool{}
	inline := &Request{srv: s} // reused by every request served on this thread
	var out []byte             // the reply to an inline request is built here
	recv := s.c.recvSpun
	if s.oneOfMany {
		recv = s.c.recvRaw
	}
	for {
		// The body is decoded before the next read: it is not copied.
		rec, fds, err := recv()
		if err != nil {
			return s.refuse(err)
		}
		files := fdFiles(fds)
		rt, body, err := checkRequest(s.routes, rec, State(s.state.Load()))
		if err == nil && rt.Flags&Once != 0 {
			if used[rt.Type] {
				err = violation("request %s is permitted once", rt.Name)
			}
			used[rt.Type] = true
		}
		if err != nil {
			CloseFiles(files)
			return s.refuse(err)
		}
		if answer := s.draining(); answer != nil {
			s.refuseDraining(answer, rt, rec.ID, files)
			continue
		}
		if rt.Flags&(Once|Inline) != 0 {
			*inline = Request{Spec: rt.Spec, ID: rec.ID, Files: files, srv: s, fds: inline.fds[:0]}
			out = s.run(ctx, rt, inline, body, out)
			continue
		}
		req := &Request{Spec: rt.Spec, ID: rec.ID, Files: files, srv: s}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			CloseFiles(files)
			return s.refuse(ctx.Err())
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.run(ctx, rt, req, body, nil)
		}()
		// The reader is about to block in recvmsg holding its P: let the
		// handler run first rather than wait for the P to be taken back.
		runtime.Gosched()
	}
}

func (s *Server) refuse(err error) error {
	switch {
	case !errors.Is(err, ErrProtocol):
	case s.onViolation != nil:
		s.onViolation(err)
	case s.logf != nil:
		s.logf("wire: closing the channel: %v", err)
	}
	return err
}

// OneOfMany marks the server as one of many in its process, as each of
// the kernel's connections is: its reader sleeps in recvmsg at once,
// without the spin before it (spin.go), and holds no thread of its own.
// Readers that spin, or that each hold a locked thread, on a process
// serving many connections of the owner's own clients take the CPU from
// the very clients whose next request they wait for, and hand the few
// Ps from thread to thread (the kernel's BenchmarkRoundTrip with four
// connections shows it). A broker serves one channel and keeps both.
// Call it before Serve.
func (s *Server) OneOfMany() { s.oneOfMany = true }

// OnViolation makes fn, not the logf NewServer was given, take the
// violation that closes the channel (once, before Serve returns): the
// kernel records it in its audit log. Call it before Serve.
func (s *Server) OnViolation(fn func(err error)) { s.onViolation = fn }

// run serves one request and sends its reply, whose body it builds in
// buf; it returns buf to build the next one in.
func (s *Server) run(ctx context.Context, rt *Route, req *Request, body any, buf []byte) []byte {
	resp, out, err := rt.serve(ctx, req, body)
	CloseFiles(req.Files)
	defer CloseFiles(out)
	defer req.closeFDs()
	r := Record{Kind: KindReply, Type: rt.Type, ID: req.ID}
	if err == nil {
		r.Body, err = AppendMarshal(buf[:0], resp)
		if cap(r.Body) <= maxPooled {
			buf = r.Body[:0]
		}
	}
	raw := req.fds
	if err != nil {
		r.Kind = KindError
		r.Body, _ = Marshal(toWireError(err))
		out, raw = nil, nil
	}
	serr := s.c.send(r, out, raw...)
	if serr != nil && !errors.Is(serr, ErrClosed) && r.Kind == KindReply {
		// Most likely a reply over the cap: the caller still gets an answer.
		r.Kind = KindError
		r.Body, _ = Marshal(toWireError(serr))
		serr = s.c.send(r, nil)
	}
	if serr != nil && !errors.Is(serr, ErrClosed) && s.logf != nil {
		s.logf("wire: reply to %s: %v", rt.Name, serr)
	}
	if req.after != nil {
		req.after()
	}
	return buf
}
