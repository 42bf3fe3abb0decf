package wire

import (
	"context"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// The test protocol: what a broker's table looks like.
const (
	stNew   State = 0
	stReady State = 1
)

type echoReq struct {
	Text string `json:"text"`
	N    int    `json:"n,omitempty"`
}
type echoResp struct {
	Text string `json:"text"`
}
type helloReq struct {
	Names []string `json:"names"`
}
type empty struct{}

var (
	specEcho  = Spec{Type: 1, Name: "echo", States: AnyState}
	specHello = Spec{Type: 2, Name: "hello", FDs: 1, MaxFDs: 4, Flags: Once, States: In(stNew)}
	specOpen  = Spec{Type: 3, Name: "open", ReplyFDs: 1, States: In(stReady)}
	specBlock = Spec{Type: 4, Name: "block", States: AnyState}
	specFail  = Spec{Type: 5, Name: "fail", States: AnyState}
)

// testRoutes builds the table; blockGot is told when a block request has
// arrived, and block returns when release is closed or its ctx ends.
func testRoutes(blockGot chan<- struct{}, release <-chan struct{}) map[Type]*Route {
	return Table(
		Handle(specEcho, func(ctx context.Context, r *Request, q *echoReq) (*echoResp, []*os.File, error) {
			return &echoResp{Text: q.Text}, nil, nil
		}),
		Handle(specHello, func(ctx context.Context, r *Request, q *helloReq) (*empty, []*os.File, error) {
			if len(q.Names) != len(r.Files) {
				return nil, nil, Errorf("bad-hello", "%d names for %d fds", len(q.Names), len(r.Files))
			}
			r.SetState(stReady)
			return &empty{}, nil, nil
		}),
		Handle(specOpen, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			f, err := os.Open("/dev/null")
			if err != nil {
				return nil, nil, err
			}
			return &empty{}, []*os.File{f}, nil
		}),
		Handle(specBlock, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			if blockGot != nil {
				blockGot <- struct{}{}
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &empty{}, nil, nil
		}),
		Handle(specFail, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			return nil, nil, Errorf("nope", "refused because the test says so")
		}),
	)
}

// socketpair returns two connected SOCK_SEQPACKET sockets.
func socketpair(t testing.TB) (*os.File, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
}

// served starts a server on one end; it returns the other end and a
// channel that gets Serve's result.
func served(t testing.TB, routes map[Type]*Route) (*os.File, <-chan error) {
	t.Helper()
	a, b := socketpair(t)
	srv, err := NewServer(b, routes, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		done <- srv.Serve(context.Background())
		close(finished)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-finished
	})
	return a, done
}

func newTestClient(t testing.TB, routes map[Type]*Route) (*Client, <-chan error) {
	t.Helper()
	a, done := served(t, routes)
	cl, err := NewClient(a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl, done
}

// wantViolation waits for Serve to return and checks it was a violation.
func wantViolation(t *testing.T, done <-chan error) {
	t.Helper()
	err := <-done
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("Serve returned %v, want a protocol violation", err)
	}
}

// rawRequest builds a request record by hand.
func rawRequest(t testing.TB, typ Type, id uint64, body string, nfd int) []byte {
	t.Helper()
	b, err := AppendRecord(nil, Record{Kind: KindRequest, Type: typ, ID: id, NFD: nfd, Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openFDs counts this process's open fds.
func openFDs(t testing.TB) int {
	t.Helper()
	// The runtime opens its poller's fds on first use; let it, first.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
