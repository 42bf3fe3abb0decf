package webhook

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
)

// turner is the harness's side of a turn, behind the real endpoint: it
// records each message and holds its turn until release is closed.
type turner struct {
	mu      sync.Mutex
	got     []endpoint.Message
	release chan struct{}
	ended   chan struct{} // a turn ended
}

func (tr *turner) Turn(ctx context.Context, m endpoint.Message, onText func(string)) (int64, error) {
	tr.mu.Lock()
	tr.got = append(tr.got, m)
	tr.mu.Unlock()
	defer func() { tr.ended <- struct{}{} }()
	select {
	case <-tr.release:
		onText("nobody reads this")
		return 2, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (tr *turner) messages() []endpoint.Message {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]endpoint.Message(nil), tr.got...)
}

// startHarness serves the real endpoint for agent a with key, its turns
// by tr, and writes the agent's bridge.json naming it with bridgeKey.
func startHarness(t *testing.T, a Agent, key, bridgeKey []byte, tr *turner) {
	t.Helper()
	srv, err := endpoint.New([]endpoint.Agent{{ID: a.ID, Owner: a.Owner, Name: a.Name, Key: key, Turn: tr}}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	d, err := ownerdir.Open(a.Home, ".lnk", "agents", a.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := &config.Bridge{AgentID: a.ID, Owner: a.Owner, Name: a.Name, Key: hex.EncodeToString(bridgeKey),
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)}
	if err := config.WriteBridge(int(d.Fd()), b); err != nil {
		t.Fatal(err)
	}
}

func testKey(seed byte) []byte {
	return bytes.Repeat([]byte{seed}, config.KeySize)
}

// TestHarnessDelivery: through the real endpoint, the post reaches the
// harness as the webhook's stranger in its own thread, and Deliver
// returns once it is taken, while the turn still runs (which the
// poster's leaving does not end); a harness that can't prove the key is
// sent nothing.
func TestHarnessDelivery(t *testing.T) {
	a := testAgent(t)
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, a, testKey(1), testKey(1), tr)
	h, err := HarnessOf(a)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.Deliver(ctx, a.ID, From("ci"), Thread("ci"), "hello"); err != nil {
		t.Fatal(err)
	}
	cancel() // the poster has its 202 and leaves
	select {
	case <-tr.ended:
		t.Fatal("the turn ended with the poster's request")
	case <-time.After(200 * time.Millisecond):
	}
	close(tr.release)
	h.Wait()
	if got := tr.messages(); len(got) != 1 || got[0] != (endpoint.Message{Thread: "webhook:ci", Text: "hello", From: "stranger:webhook:ci"}) {
		t.Fatalf("the harness got %+v", got)
	}

	b := testAgent(t)
	liar := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, b, testKey(2), testKey(3), liar)
	h2, err := HarnessOf(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := h2.Deliver(context.Background(), b.ID, From("ci"), Thread("ci"), "hello"); !errors.Is(err, endpoint.ErrNoProof) {
		t.Fatalf("a harness without the bridge's key: %v", err)
	}
	if n := len(liar.messages()); n != 0 {
		t.Fatal("the post went to a harness that did not prove it holds the key")
	}
}

// TestBodyCapIsWhatTheHarnessTakes: the listener's cap on a body
// (webhookcheck.MaxBody, DefaultLimits.MaxBody: 1 MiB) is the most the
// harness's endpoint takes from others (endpoint.MaxOthersMessage), so a
// post of 1 MiB, of the bytes JSON escapes most, reaches the real
// endpoint whole (202, not a 503 its sender would retry for ever), and
// one byte more is 413 at the listener.
func TestBodyCapIsWhatTheHarnessTakes(t *testing.T) {
	if DefaultLimits.MaxBody != endpoint.MaxOthersMessage {
		t.Fatalf("the listener takes %d bytes, the harness %d", DefaultLimits.MaxBody, endpoint.MaxOthersMessage)
	}
	r := newRig(t, testLimits())
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	close(tr.release)
	startHarness(t, r.a, testKey(4), testKey(4), tr)
	h, err := HarnessOf(r.a)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewListener(r.a, r.checker, h, testLimits(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	r.base = serve(t, l)
	body := []byte(strings.Repeat("<\x01", endpoint.MaxOthersMessage/2))
	want(t, "a body of 1 MiB", r.post(t, "/h/"+r.hook.ID, "big", time.Now(), "text/plain", body, r.secret), 202)
	want(t, "a body of 1 MiB and a byte", r.post(t, "/h/"+r.hook.ID, "bigger", time.Now(), "text/plain", append(body, 'x'), r.secret), 413)
	h.Wait()
	if got := tr.messages(); len(got) != 1 || got[0].Text != string(body) {
		t.Fatalf("the harness got %d messages", len(got))
	}
}
