package webhook

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/wayin"
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

// has keeps a conversation as the harness's store does: once a turn
// began in it.
func (tr *turner) has(thread string) (bool, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, m := range tr.got {
		if m.Thread == thread {
			return true, nil
		}
	}
	return false, nil
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
	startHarnessAs(t, endpoint.Agent{ID: a.ID, Owner: a.Owner, Name: a.Name, Key: key, Turn: tr, Has: tr.has}, a, bridgeKey)
}

// startHarnessAs serves the real endpoint for ea, and writes agent a's
// bridge.json naming it with bridgeKey.
func startHarnessAs(t *testing.T, ea endpoint.Agent, a Agent, bridgeKey []byte) {
	t.Helper()
	srv, err := endpoint.New([]endpoint.Agent{ea}, t.Logf)
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

// openWayIn opens agent a's real way in (services/wayin), as its
// supervisor does, serving it until the test ends; its log is returned.
func openWayIn(t *testing.T, a Agent) *testenv.SyncBuffer {
	t.Helper()
	log := &testenv.SyncBuffer{}
	w, err := wayin.Open(a.Home, &caps.Agent{Name: a.Name, ID: a.ID, Owner: a.Owner}, func(f string, args ...any) {
		fmt.Fprintf(log, f+"\n", args...)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; w.Close() })
	return log
}

// TestWayInDelivery: through the agent's real way in and the real
// endpoint, the post reaches the harness as the webhook's stranger in
// its own conversation at hop 0, and Deliver returns once it is taken,
// while the turn still runs (which the poster's leaving does not end);
// a harness that can't prove the endpoint key is sent nothing, and the
// refusal comes back; an agent whose way in isn't listening takes
// nothing.
func TestWayInDelivery(t *testing.T) {
	a := testAgent(t)
	d := WayInOf(a)
	if err := d.Deliver(context.Background(), a.ID, From("ci"), Thread("ci"), "hello"); !errors.Is(err, wayin.ErrNotListening) {
		t.Fatalf("no way in: %v", err)
	}
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, a, testKey(1), testKey(1), tr)
	openWayIn(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	if err := d.Deliver(ctx, a.ID, From("ci"), Thread("ci"), "hello"); err != nil {
		t.Fatal(err)
	}
	cancel() // the poster has its 202 and leaves
	select {
	case <-tr.ended:
		t.Fatal("the turn ended with the poster's request")
	case <-time.After(200 * time.Millisecond):
	}
	close(tr.release)
	<-tr.ended
	if got := tr.messages(); len(got) != 1 || got[0] != (endpoint.Message{Thread: "webhook:ci", Text: "hello", From: "stranger:webhook:ci"}) {
		t.Fatalf("the harness got %+v", got)
	}
	if err := d.Deliver(context.Background(), "ffffffffffffffffffffffffffffffff", From("ci"), Thread("ci"), "hello"); err == nil {
		t.Fatal("a post for another agent was handed")
	}

	b := testAgent(t)
	liar := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, b, testKey(2), testKey(3), liar)
	blog := openWayIn(t, b)
	if err := WayInOf(b).Deliver(context.Background(), b.ID, From("ci"), Thread("ci"), "hello"); err == nil || !strings.Contains(err.Error(), "did not take the message") {
		t.Fatalf("a harness without the bridge's key: %v", err)
	}
	if n := len(liar.messages()); n != 0 {
		t.Fatal("the post went to a harness that did not prove it holds the key")
	}
	if !strings.Contains(blog.String(), "refused a message from \"stranger:webhook:ci\"") {
		t.Errorf("the way in did not log its refusal: %s", blog.String())
	}
}

// TestListenerHandsThroughTheWayIn: lnk agent webhook serve's listener,
// with the real lnk-webhook, the real way in and the real endpoint: a
// post while the agent's way in isn't listening (its harness running,
// bridge.json naming it), and one its harness
// refuses, are answered 503 and kept nowhere (the same post taken once
// they can be: 202, a repeat then 401); a taken post is answered 202
// while its turn is still held, and reaches the harness once, as the
// stranger.
func TestListenerHandsThroughTheWayIn(t *testing.T) {
	r := newRig(t, testLimits())
	r.listen(t, r.checker, WayInOf(r.a), testLimits(), t.Logf)
	p, body := "/h/"+r.hook.ID, []byte(`{"event":"push"}`)
	// The harness runs and bridge.json names it, but the way in is
	// closed: nothing reaches the harness but through the way in.
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, r.a, testKey(8), testKey(8), tr)
	want(t, "a post with no way in", r.post(t, p, "d1", time.Now(), "application/json", body, r.secret), 503)
	if n := len(tr.messages()); n != 0 {
		t.Fatal("the post reached the harness past its way in")
	}

	tr = &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, r.a, testKey(5), testKey(6), tr) // proves another key than bridge.json's
	openWayIn(t, r.a)
	want(t, "a post the harness can't be trusted with", r.post(t, p, "d1", time.Now(), "application/json", body, r.secret), 503)
	if n := len(tr.messages()); n != 0 {
		t.Fatal("the post reached a harness that did not prove the key")
	}

	tr = &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	startHarness(t, r.a, testKey(7), testKey(7), tr)
	want(t, "the same post, now taken", r.post(t, p, "d1", time.Now(), "application/json", body, r.secret), 202)
	select {
	case <-tr.ended:
		t.Fatal("202 came after the turn ended")
	default:
	}
	want(t, "its repeat", r.post(t, p, "d1", time.Now(), "application/json", body, r.secret), 401)
	close(tr.release)
	<-tr.ended
	if got := tr.messages(); len(got) != 1 || got[0] != (endpoint.Message{Thread: "webhook:ci", Text: string(body), From: "stranger:webhook:ci"}) {
		t.Fatalf("the harness got %+v", got)
	}
}

// TestBodyCapIsWhatTheHarnessTakes: the listener's cap on a body
// (webhookcheck.MaxBody, DefaultLimits.MaxBody: 1 MiB) is the most the
// harness's endpoint takes from others (endpoint.MaxOthersMessage), so a
// post of 1 MiB, of the bytes JSON escapes most, reaches the real
// endpoint whole through the real way in (202, not a 503 its sender
// would retry for ever), and one byte more is 413 at the listener.
func TestBodyCapIsWhatTheHarnessTakes(t *testing.T) {
	if DefaultLimits.MaxBody != endpoint.MaxOthersMessage {
		t.Fatalf("the listener takes %d bytes, the harness %d", DefaultLimits.MaxBody, endpoint.MaxOthersMessage)
	}
	r := newRig(t, testLimits())
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	close(tr.release)
	startHarness(t, r.a, testKey(4), testKey(4), tr)
	openWayIn(t, r.a)
	r.listen(t, r.checker, WayInOf(r.a), testLimits(), t.Logf)
	body := []byte(strings.Repeat("<\x01", endpoint.MaxOthersMessage/2))
	want(t, "a body of 1 MiB", r.post(t, "/h/"+r.hook.ID, "big", time.Now(), "text/plain", body, r.secret), 202)
	want(t, "a body of 1 MiB and a byte", r.post(t, "/h/"+r.hook.ID, "bigger", time.Now(), "text/plain", append(body, 'x'), r.secret), 413)
	<-tr.ended
	if got := tr.messages(); len(got) != 1 || got[0].Text != string(body) {
		t.Fatalf("the harness got %d messages", len(got))
	}
}
