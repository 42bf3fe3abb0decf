package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// lead reads the channel as its one reader (the caller holds rd) until
// the reply to call id comes, and returns it as the read left it: the
// body aliases the read buffer until rd is released. Every other
// caller's reply is handed to it on the way. When ctx ends first the call
// is given up; when the channel dies every waiting call fails.
func (cl *Client) lead(ctx context.Context, id uint64, ca *call) (Record, []int, error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, cl.wake)
		defer stop()
	}
	for {
		rec, fds, spun, err := cl.c.trySpin()
		if !spun {
			if ctx.Done() != nil && !cl.readable(ctx) {
				return Record{}, nil, cl.giveUp(ctx, id, ca)
			}
			rec, fds, err = cl.c.recvRaw()
		}
		if err == nil {
			var mine bool
			if mine, err = cl.dispatch(rec, fds, id); err == nil && mine {
				return rec, fds, nil
			}
		}
		if err != nil {
			cl.die(err)
			return Record{}, nil, fmt.Errorf("%s: %w", ca.spec.Name, cl.Err())
		}
	}
}

// dispatch matches a record read to its call: mine reports it is call
// id's own, still in the read buffer; another caller's reply goes to it
// as a copy. A record that is no reply to a call in flight is a
// violation (its fds are closed); a reply to a call given up is dropped.
func (cl *Client) dispatch(rec Record, fds []int, id uint64) (mine bool, err error) {
	if rec.Kind == KindRequest {
		closeFDs(fds)
		return false, violation("a request arrived on a client channel")
	}
	cl.mu.Lock()
	ca, ok := cl.pending[rec.ID]
	delete(cl.pending, rec.ID)
	cl.mu.Unlock()
	if !ok {
		closeFDs(fds)
		return false, violation("a reply to id %d, which was never asked", rec.ID)
	}
	if ca == nil { // given up by its caller
		closeFDs(fds)
		return false, nil
	}
	if rec.Type != ca.spec.Type || (rec.Kind == KindReply && len(fds) != ca.spec.ReplyFDs) {
		closeFDs(fds)
		err := violation("reply to %s has type %d and %d fds", ca.spec.Name, rec.Type, len(fds))
		if rec.ID != id {
			ca.res <- result{err: fmt.Errorf("%s: %w: %v", ca.spec.Name, ErrClosed, err)}
		}
		return false, err
	}
	if rec.ID == id {
		return true, nil
	}
	rec.Body = slices.Clone(rec.Body)
	ca.res <- result{rec: rec, fds: slices.Clone(fds)}
	return false, nil
}

// die records why the channel died, shuts it (which wakes the watcher)
// and fails every call still waiting.
func (cl *Client) die(why error) {
	cl.c.shutdown()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.err == nil {
		cl.err = why
		if !errors.Is(why, ErrClosed) {
			cl.err = fmt.Errorf("%w: %v", ErrClosed, why)
		}
	}
	for id, ca := range cl.pending {
		if ca != nil {
			ca.res <- result{err: fmt.Errorf("%s: %w", ca.spec.Name, cl.err)}
		}
		delete(cl.pending, id)
	}
}

// watch waits, in poll(2), for the channel's end only (POLLRDHUP, and
// POLLHUP and POLLERR, which poll always reports): a reply arriving does
// not wake it. Then it takes the reader's turn for good, hands on the
// replies that came before the end, fails every call still waiting,
// closes the socket and closes Done.
func (cl *Client) watch() {
	pfd := []unix.PollFd{{Fd: int32(cl.c.fd), Events: unix.POLLRDHUP}}
	for {
		_, err := unix.Poll(pfd, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pfd[0].Revents != 0 {
			break
		}
	}
	cl.c.shutdown()
	cl.rd <- struct{}{}
	for {
		rec, fds, err := cl.c.recvRaw()
		if err == nil {
			_, err = cl.dispatch(rec, fds, 0)
		}
		if err != nil {
			cl.die(err)
			break
		}
	}
	cl.c.release()
	cl.mu.Lock()
	unix.Close(cl.efd)
	cl.efd = -1
	cl.mu.Unlock()
	close(cl.done)
}

func newWaker() (int, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("eventfd: %w", err)
	}
	return fd, nil
}

// wake wakes the reader, whose call's context has ended.
func (cl *Client) wake() {
	one := [8]byte{1}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.efd >= 0 {
		unix.Write(cl.efd, one[:])
	}
}

// readable waits until a record (or the channel's end) can be read, or
// ctx ends (false).
func (cl *Client) readable(ctx context.Context) bool {
	cl.mu.Lock()
	efd := cl.efd
	cl.mu.Unlock()
	pfd := [2]unix.PollFd{{Fd: int32(cl.c.fd), Events: unix.POLLIN}, {Fd: int32(efd), Events: unix.POLLIN}}
	for {
		if ctx.Err() != nil {
			return false
		}
		_, err := unix.Poll(pfd[:], -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pfd[0].Revents != 0 {
			return true // recvmsg says what it is
		}
		if pfd[1].Revents != 0 {
			var b [8]byte
			unix.Read(efd, b[:]) // another call's wake-up, or ours: ctx says
		}
	}
}
