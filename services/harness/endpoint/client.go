package endpoint

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
	"strconv"
	"strings"
	"sync"
	"time"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/harness/config"
)

// ErrNoProof is returned when what answers the agent's port can't prove
// it holds the agent's key: nothing of the message, nor the key, was
// sent.
var ErrNoProof = errors.New("what answers the agent's port did not prove it holds the agent's key: the message was not sent")

// ErrNotAnswering is returned when nothing answers the agent's port.
var ErrNotAnswering = errors.New("the agent's harness is not answering")

// unansweredError is a proof's connection closed, refused or reset
// before any answer: tried again.
type unansweredError struct{ err error }

func (e *unansweredError) Error() string { return e.err.Error() }
func (e *unansweredError) Unwrap() error { return e.err }

// retryFor is how long a connection closed unanswered is tried again,
// every retryEvery.
const (
	retryFor   = 5 * time.Second
	retryEvery = 100 * time.Millisecond
)

// maxLine bounds a line of an answer's stream, and maxAnswer the whole.
const (
	maxLine   = 16 << 20
	maxAnswer = 16 << 20
)

// Client is the owner's side of an agent's endpoint (lnk agent chat and
// send), made from bridge.json.
type Client struct {
	b    *config.Bridge
	key  []byte
	port int
}

// NewClient is a Client for the agent bridge.json b names.
func NewClient(b *config.Bridge) (*Client, error) {
	port, err := b.Port()
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(b.Key)
	if err != nil || len(key) != config.KeySize {
		return nil, fmt.Errorf("%w: bridge.json's key is not %d bytes in hex", config.ErrBad, config.KeySize)
	}
	return &Client{b: b, key: key, port: port}, nil
}

// oneConn dials the endpoint once: the proof and the message go on that
// one connection, and a second dial (the connection lost between them)
// is refused rather than sending the key to whatever answers then.
type oneConn struct {
	mu   sync.Mutex
	addr string
	used bool
}

func (o *oneConn) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.used {
		return nil, errors.New("the endpoint's connection closed after its proof: not sent on another")
	}
	o.used = true
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", o.addr)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotAnswering, err)
	}
	return c, nil
}

// Send sends text to thread as the owner, first checking the harness's
// proof on the same connection, and gives each text delta of the answer
// to onText. It returns the answer's event number. Ending ctx ends the
// turn (the connection closes).
func (c *Client) Send(ctx context.Context, thread, text string, onText func(string)) (int64, error) {
	return c.SendMessage(ctx, Message{Thread: thread, Text: text}, nil, onText)
}

// SendMessage is Send of m, from m.From with m.Hops when From is set (a
// message from others, which the way in hands). onTaken, if not nil, is
// called once the harness took the message (answered 200), before the
// answer's first word; a sender who speaks once and spoke already is
// refused with a *RefusedError whose Status is 409 (IsAlreadyTaken).
func (c *Client) SendMessage(ctx context.Context, m Message, onTaken func(), onText func(string)) (int64, error) {
	resp, err := c.post(ctx, m)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if onTaken != nil {
		onTaken()
	}
	return readStream(resp.Body, onText)
}

// post checks the proof, then sends m (from "" the owner) on the same
// connection, and returns the answer once it is 200.
func (c *Client) post(ctx context.Context, m Message) (*http.Response, error) {
	base := "http://127.0.0.1:" + strconv.Itoa(c.port)
	var hc *http.Client
	var tr *http.Transport
	// A connection closed unanswered (the harness starting or restarting)
	// is tried again, on a new connection, for retryFor: only the proof,
	// before the key or the message is sent.
	for end := time.Now().Add(retryFor); ; {
		oc := &oneConn{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port))}
		tr = &http.Transport{DialContext: oc.dial, MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true, Proxy: nil}
		hc = &http.Client{Transport: tr}
		err := c.checkProof(ctx, hc, base)
		if err == nil {
			break
		}
		tr.CloseIdleConnections()
		var unanswered *unansweredError
		if !errors.As(err, &unanswered) || time.Now().After(end) || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryEvery):
		}
	}
	body, _ := json.Marshal(MessageRequest{Thread: m.Thread, Text: m.Text, New: m.New})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+PathMessage, bytes.NewReader(body))
	if err != nil {
		hc.CloseIdleConnections()
		return nil, err
	}
	c.headers(req)
	if m.From != "" {
		req.Header.Set(HeaderFrom, m.From)
		req.Header.Set(HeaderHops, strconv.Itoa(m.Hops))
	}
	if m.Subagent != nil {
		setSubagent(req.Header, m.Subagent)
	}
	req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(c.key))
	resp, err := hc.Do(req)
	if err != nil {
		hc.CloseIdleConnections()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		defer hc.CloseIdleConnections()
		return nil, refusedBy(resp)
	}
	resp.Body = &oneConnBody{ReadCloser: resp.Body, tr: tr}
	return resp, nil
}

// oneConnBody closes the message's connection with its answer.
type oneConnBody struct {
	io.ReadCloser
	tr *http.Transport
}

func (b *oneConnBody) Close() error {
	err := b.ReadCloser.Close()
	b.tr.CloseIdleConnections()
	return err
}

func (c *Client) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderAgent, c.b.Name)
	req.Header.Set(HeaderAgentID, c.b.AgentID)
	req.Header.Set(HeaderOwner, c.b.Owner)
}

// checkProof sends a fresh challenge and checks the answer.
func (c *Client) checkProof(ctx context.Context, hc *http.Client, base string) error {
	ch := proof.NewChallenge()
	body, _ := json.Marshal(ProofRequest{Challenge: hex.EncodeToString(ch[:])})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+PathProof, bytes.NewReader(body))
	if err != nil {
		return err
	}
	c.headers(req)
	resp, err := hc.Do(req)
	if err != nil {
		return &unansweredError{err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoProof, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w (it answered %d: %s)", ErrNoProof, resp.StatusCode, errorOf(data))
	}
	var a ProofAnswer
	ans, herr := []byte(nil), json.Unmarshal(data, &a)
	if herr == nil {
		ans, herr = hex.DecodeString(a.Answer)
	}
	if herr != nil || !proof.Check(c.key, proof.Context{AgentID: c.b.AgentID, Owner: c.b.Owner, Purpose: Purpose}, ch, ans) {
		return ErrNoProof
	}
	return nil
}

// RefusedError is a request the endpoint refused: its HTTP status, and
// why in the harness's words (cleaned to one line). It is a refusal of
// internal/refusal's shape: errors.As finds its *refusal.Refusal, and
// errors.Is its rule's sentinel.
type RefusedError struct {
	refusal.Refusal
	Status int
}

// Unwrap gives the shape itself, so errors.As finds a *refusal.Refusal
// in the harness's refusal as in any other (and, past it, its cause).
func (e *RefusedError) Unwrap() error { return &e.Refusal }

// A refusal naming the rule of a conversation missing or kept already
// carries it (errors.Is(err, conversation.ErrMissing)); any other rule
// named is not taken from the wire. A 503 (no key yet, an inbox full,
// what the harness could not read) or a 429 is a refusal for now, by
// refusal.RuleBusy, decided here by the status alone: every other status
// is a refusal of this message by one of the harness's rules.
func refusedBy(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	r := &RefusedError{Status: resp.StatusCode,
		Refusal: refusal.Refusal{Reason: fmt.Sprintf("the agent's harness refused the message (%d): %s", resp.StatusCode, errorOf(data))}}
	var e Event
	if json.Unmarshal(data, &e) == nil {
		switch {
		case e.Rule == conversation.RuleMissing && resp.StatusCode == http.StatusNotFound,
			e.Rule == conversation.RuleExists && resp.StatusCode == http.StatusConflict:
			r.Rule = e.Rule
		}
	}
	if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
		r.Rule = refusal.RuleBusy
	}
	return r
}

func errorOf(data []byte) string {
	var e Event
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return textsafe.Line(e.Error)
	}
	return "no reason given"
}

// IsAlreadyTaken says whether err is the harness's 409: the sender
// speaks once, and its message was taken already.
func IsAlreadyTaken(err error) bool {
	var r *RefusedError
	return errors.As(err, &r) && r.Status == http.StatusConflict && strings.HasSuffix(r.Reason, AlreadyTaken)
}

// TurnError is a turn that failed after it began.
type TurnError struct{ Why string }

func (e *TurnError) Error() string { return "the agent's turn failed: " + e.Why }

// readStream reads an answer's NDJSON events: text to onText, then its
// end. A line past 16 MiB, an answer past 16 MiB, a line that isn't an
// event, or a stream cut before its end fails.
func readStream(r io.Reader, onText func(string)) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	total := 0
	for sc.Scan() {
		var e Event
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return 0, errors.New("the harness's answer holds a line that is not an event")
		}
		switch {
		case e.Error != "":
			return 0, &TurnError{Why: textsafe.Line(e.Error)}
		case e.Done:
			return e.Seq, nil
		}
		total += len(e.Text)
		if total > maxAnswer {
			return 0, errors.New("the harness's answer is larger than 16 MiB")
		}
		if onText != nil {
			onText(e.Text)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("the harness's answer was cut: %w", err)
	}
	return 0, errors.New("the harness's answer was cut before its end")
}
