package webhook

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/secret"
)

// endpoint is a test endpoint that keeps h-endpoint's contract: it
// answers the proof with proveKey, and takes a message only with the
// key, on the connection that was proved, then holds the turn open until
// release is closed.
type endpoint struct {
	key, proveKey []byte
	agentID       string
	owner         string
	mu            sync.Mutex
	proved        map[string]bool // remote addresses that asked for the proof
	got           []string
	keySent       bool
	release       chan struct{}
	turnEnded     chan struct{}
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch r.URL.Path {
	case "/link/proof":
		var req struct{ Challenge string }
		json.NewDecoder(r.Body).Decode(&req)
		b, err := hex.DecodeString(req.Challenge)
		if err != nil || len(b) != proof.ChallengeSize || r.Header.Get("Link-Agent-Id") != e.agentID {
			http.Error(w, "bad proof request", 400)
			return
		}
		var ch [proof.ChallengeSize]byte
		copy(ch[:], b)
		a, _ := proof.Answer(e.proveKey, proof.Context{AgentID: e.agentID, Owner: e.owner, Purpose: "endpoint"}, ch)
		e.proved[r.RemoteAddr] = true
		json.NewEncoder(w).Encode(map[string]string{"answer": hex.EncodeToString(a[:])})
	case "/link/message":
		e.keySent = true
		if !e.proved[r.RemoteAddr] || r.Header.Get("Authorization") != "Bearer "+hex.EncodeToString(e.key) {
			http.Error(w, "no", 401)
			return
		}
		var m struct{ Thread, Text string }
		json.NewDecoder(r.Body).Decode(&m)
		e.got = append(e.got, r.Header.Get("Link-From")+"|"+m.Thread+"|"+m.Text)
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		e.mu.Unlock()
		select {
		case <-e.release:
			w.Write([]byte(`{"text":"ok"}` + "\n" + `{"done":true,"seq":2}` + "\n"))
		case <-r.Context().Done():
		}
		close(e.turnEnded)
		e.mu.Lock()
	}
}

func startEndpoint(t *testing.T, e *endpoint) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// TestHarnessDelivery: the post reaches the endpoint after its proof, as
// the webhook's stranger in its own thread, and Deliver returns once it
// is taken, while the turn still runs (which the poster's leaving does
// not end); an endpoint that can't prove the key is sent neither the key
// nor the post.
func TestHarnessDelivery(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i + 1)
	}
	mk := func(prove []byte) (*endpoint, *Harness) {
		e := &endpoint{key: key, proveKey: prove, agentID: strings.Repeat("a", 32), owner: "root",
			proved: map[string]bool{}, release: make(chan struct{}), turnEnded: make(chan struct{})}
		k, err := secret.New(append([]byte(nil), key...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k.Destroy)
		return e, &Harness{Port: startEndpoint(t, e), AgentID: e.agentID, Owner: "root", Name: "helper", Key: k}
	}

	e, h := mk(key)
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.Deliver(ctx, e.agentID, From("ci"), Thread("ci"), "hello"); err != nil {
		t.Fatal(err)
	}
	cancel() // the poster has its 202 and leaves
	select {
	case <-e.turnEnded:
		t.Fatal("the turn ended with the poster's request")
	case <-time.After(200 * time.Millisecond):
	}
	close(e.release)
	h.Wait()
	if got := strings.Join(e.got, "\n"); got != "stranger:webhook:ci|webhook:ci|hello" {
		t.Fatalf("the endpoint got %q", got)
	}

	liar := make([]byte, 32)
	e2, h2 := mk(liar)
	if err := h2.Deliver(context.Background(), e2.agentID, From("ci"), Thread("ci"), "hello"); !errors.Is(err, ErrNoProof) {
		t.Fatalf("an endpoint without the key: %v", err)
	}
	if e2.keySent {
		t.Fatal("the key and post went to an endpoint that did not prove it holds the key")
	}
}
