package webhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/secret"
)

// The endpoint's contract (services/harness/endpoint, branch h-endpoint):
// its paths, headers and the proof's purpose.
const (
	pathProof     = "/link/proof"
	pathMessage   = "/link/message"
	headerAgent   = "Link-Agent"
	headerAgentID = "Link-Agent-Id"
	headerOwner   = "Link-Agent-Owner"
	headerFrom    = "Link-From"
	proofPurpose  = "endpoint"
)

// ErrNoProof is an endpoint that could not prove it holds the agent's
// key: neither the key nor the post was sent to it.
var ErrNoProof = errors.New("what answers the agent's port did not prove it is the agent's harness")

// Harness delivers to Link Harness's endpoint on 127.0.0.1:Port: on one
// connection, the harness's proof first (a fresh challenge, its answer
// checked with helpers/keybroker/proof), then POST /link/message with the
// key and Link-From. It returns once the harness answers 200 (it took the
// message); the answer's stream is read to its end in the background, so
// the turn runs on and its answer goes nowhere.
type Harness struct {
	Port    int
	AgentID string
	Owner   string
	Name    string
	Key     *secret.Value // the endpoint key (bridge.json's)
	// TurnLimit bounds how long a taken message's stream is read.
	TurnLimit time.Duration

	wg sync.WaitGroup
}

// Wait waits for the streams read in the background (tests, shutdown).
func (h *Harness) Wait() { h.wg.Wait() }

// Deliver implements Deliverer.
func (h *Harness) Deliver(ctx context.Context, agentID, from, thread, text string) error {
	if agentID != h.AgentID {
		return fmt.Errorf("a post for agent %s handed to agent %s's harness", agentID, h.AgentID)
	}
	// The request outlives ctx once the harness has taken it: the turn
	// goes on after the poster has its 202.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(h.Port))
	var dialed atomic.Bool
	tr := &http.Transport{Proxy: nil, DisableCompression: true, MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1,
		// One connection: a second dial (the first lost between proof
		// and message) is refused rather than sending the key to
		// whatever answers then.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if dialed.Swap(true) {
				return nil, errors.New("the endpoint's connection was lost after its proof")
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		}}
	hc := &http.Client{Transport: tr}
	fail := func(err error) error {
		stop()
		cancel()
		tr.CloseIdleConnections()
		return err
	}
	if err := h.checkProof(rctx, hc); err != nil {
		return fail(err)
	}
	body, _ := json.Marshal(struct {
		Thread string `json:"thread"`
		Text   string `json:"text"`
	}{thread, text})
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, "http://"+addr+pathMessage, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	h.headers(req)
	req.Header.Set(headerFrom, from)
	req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(h.Key.Bytes()))
	runtime.KeepAlive(h.Key)
	resp, err := hc.Do(req)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		why, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fail(fmt.Errorf("the harness refused the post (%d): %q", resp.StatusCode, bytes.TrimSpace(why)))
	}
	stop() // taken: the poster leaving no longer ends the turn
	limit := h.TurnLimit
	if limit == 0 {
		limit = time.Hour
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer tr.CloseIdleConnections()
		defer cancel()
		timer := time.AfterFunc(limit, cancel)
		defer timer.Stop()
		drain(resp.Body)
		resp.Body.Close()
	}()
	return nil
}

// drain reads the answer's lines to its end and keeps none: a stranger's
// answer goes nowhere.
func drain(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 16<<20)
	for sc.Scan() {
	}
}

func (h *Harness) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerAgent, h.Name)
	req.Header.Set(headerAgentID, h.AgentID)
	req.Header.Set(headerOwner, h.Owner)
}

// checkProof sends a fresh challenge and checks the harness's answer.
func (h *Harness) checkProof(ctx context.Context, hc *http.Client) error {
	ch := proof.NewChallenge()
	body, _ := json.Marshal(struct {
		Challenge string `json:"challenge"`
	}{hex.EncodeToString(ch[:])})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(h.Port))+pathProof, bytes.NewReader(body))
	if err != nil {
		return err
	}
	h.headers(req)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("the agent's harness is not answering: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil || resp.StatusCode != http.StatusOK {
		return ErrNoProof
	}
	var a struct {
		Answer string `json:"answer"`
	}
	if json.Unmarshal(data, &a) != nil {
		return ErrNoProof
	}
	ans, err := hex.DecodeString(a.Answer)
	ok := err == nil && proof.Check(h.Key.Bytes(), proof.Context{AgentID: h.AgentID, Owner: h.Owner, Purpose: proofPurpose}, ch, ans)
	runtime.KeepAlive(h.Key)
	if !ok {
		return ErrNoProof
	}
	return nil
}
