package wire

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// drain is a server's stop in order: set by [Server.Drain], read by
// Serve.
type drain struct {
	answer atomic.Pointer[Error] // what a request read after Drain gets
	bound  <-chan struct{}       // closed when in-flight requests may run no longer
	once   sync.Once
}

// Drain stops the server in order, as the kernel does on SIGTERM: the
// socket is shut for reading, so the peer can send nothing more; the
// requests it had already sent are still read, checked like any other
// (a violation still closes the channel), and answered with answer, never
// served; requests in flight finish and their answers are written. Serve
// then returns once they have, or once bound is closed: past it the
// handlers' context ends and the socket is shut both ways, so no handler
// or write can hold the stop. A nil bound waits for the handlers without
// limit. Drain may be called before or while Serve runs, at most once
// to effect.
func (s *Server) Drain(answer *Error, bound <-chan struct{}) {
	s.drain.once.Do(func() {
		s.drain.bound = bound
		s.drain.answer.Store(answer)
		s.c.mu.RLock()
		if !s.c.closed {
			unix.Shutdown(s.c.fd, unix.SHUT_RD)
		}
		s.c.mu.RUnlock()
	})
}

// draining is the answer for a request read after Drain, nil before.
func (s *Server) draining() *Error { return s.drain.answer.Load() }

// refuseDraining answers rec with the drain's answer and closes what came
// with it.
func (s *Server) refuseDraining(answer *Error, rt *Route, id uint64, files []*os.File) {
	CloseFiles(files)
	r := Record{Kind: KindError, Type: rt.Type, ID: id}
	r.Body, _ = Marshal(answer)
	if err := s.c.send(r, nil); err != nil && !errors.Is(err, ErrClosed) && s.logf != nil {
		s.logf("wire: answering %s while draining: %v", rt.Name, err)
	}
}

// waitDrained waits for the handlers in flight after a Drain, at most
// until its bound; past it cancel ends their context and the socket is
// shut both ways, then the wait goes on until every handler has returned.
func (s *Server) waitDrained(wg *sync.WaitGroup, cancel func()) {
	if s.draining() == nil {
		return
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-s.drain.bound:
		cancel()
		s.c.shutdown()
		<-done
	}
}
