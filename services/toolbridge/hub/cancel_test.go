package hub

import (
	"io"
	"net"
	"testing"
)

type discard struct{ io.Writer }

func (discard) Close() error { return nil }

// A request its session cancels is forgotten at once, its progress token
// with it: a server need not answer it, and the hub, which lives as long
// as its sessions come, would otherwise hold it for good.
func TestACancelledRequestIsForgotten(t *testing.T) {
	h := &Hub{pending: map[uint64]pending{}, tokens: map[string]pending{}, sessions: map[*session]struct{}{},
		srv: &serverProc{in: discard{io.Discard}, done: make(chan struct{})}}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := newSession(h, a)
	s.handle([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p"}}}`))
	if len(h.pending) != 1 || len(h.tokens) != 1 || len(s.ids) != 1 {
		t.Fatalf("a call sent: %d pending, %d tokens, %d ids", len(h.pending), len(h.tokens), len(s.ids))
	}
	s.handle([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	if len(h.pending) != 0 || len(h.tokens) != 0 || len(s.ids) != 0 {
		t.Fatalf("the call cancelled: %d pending, %d tokens, %d ids left", len(h.pending), len(h.tokens), len(s.ids))
	}
}
