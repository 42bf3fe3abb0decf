// Package remote is Link's own stdio MCP server for a tool at a URL
// (tools-and-asking.txt "A tool at a URL"): it reads JSON-RPC messages a
// line each on stdin, sends each as a streamable-HTTP POST with the
// server's session, and writes every message of the answer, a line each,
// on stdout. The bridge runs it outside every sandbox like any other
// tool's server.
//
// # Security
//
// Holds: the URL and its headers (a token among them), read from its
// environment (LNK_MCP_HEADER_<n> = "Name: value"), never from a command
// line and never written to its output or errors. May: reach https://, or
// http:// on this machine only (checked again here, whatever started it).
// Never follows a redirect. Trusts: nothing the server answers, which it
// passes on as it is, capped at MaxMessage.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// MaxMessage caps one message either way.
const MaxMessage = 8 << 20

// ErrSessionGone is the server's 404 to a request with its session: the
// session expired, or the server forgot it. Streamable HTTP asks the
// client to start another with initialize; Run then ends, so the bridge
// answers its own client that the session is gone, which tells it the
// same (a session of the bridge is one run of this client).
var ErrSessionGone = errors.New("the server no longer knows the session (404): it ended, and a new one starts with initialize")

// Client relays one stdio session to URL.
type Client struct {
	URL     string
	Headers [][2]string
	HTTP    *http.Client

	// CallTime bounds one request's call, its resumptions with it
	// (DefaultCallTime where zero).
	CallTime time.Duration

	mu       sync.Mutex // guards session, protocol and calls: answers go beside requests
	session  string
	protocol string
	calls    map[string]context.CancelCauseFunc // the request in flight, by id
}

// DefaultCallTime is a call's time where Client.CallTime is zero: the
// HTTP client's own bound on one request.
const DefaultCallTime = 10 * time.Minute

// errCancelled ends a call whose request the bridge cancelled
// (notifications/cancelled): a resumption of its stream stops.
var errCancelled = errors.New("the call was cancelled: its answer's stream is no longer read")

// FromEnv makes a client of url with the headers LNK_MCP_HEADER_1… hold.
func FromEnv(url string, environ []string) (*Client, error) {
	if err := tooldef.CheckURL(url); err != nil {
		return nil, err
	}
	type hdr struct {
		n  int
		kv [2]string
	}
	var hs []hdr
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		ns, ok := strings.CutPrefix(k, "LNK_MCP_HEADER_")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(ns)
		if err != nil {
			return nil, fmt.Errorf("%s: not LNK_MCP_HEADER_<n>", k)
		}
		name, value, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%s is not 'Name: value'", k)
		}
		hs = append(hs, hdr{n, [2]string{strings.TrimSpace(name), strings.TrimSpace(value)}})
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].n < hs[j].n })
	c := &Client{URL: url, HTTP: &http.Client{
		Timeout:       10 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	for _, h := range hs {
		c.Headers = append(c.Headers, h.kv)
	}
	return c, nil
}

// Run relays until in ends. Requests and notifications go to the server
// one at a time, in order (initialized after initialize); an answer to a
// request of the server's (a message with an id and no method) and a
// notifications/cancelled go at once, beside them, since the server may
// be waiting on the one, and the other is about the call in flight. Each
// message of the server's is written out as it arrives, a line in one
// write, so a request of the server's inside an answer's event stream
// reaches the bridge (which refuses it) while that stream is still open.
// Reading never waits on the server: a message waits its turn on a
// goroutine of its own.
//
// At the end of in, once every message has gone, it ends the server's
// session (DELETE). A session the server no longer knows (404) ends Run
// at once with ErrSessionGone, answering nothing more.
func (c *Client) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o := &lines{w: out}
	var beside sync.WaitGroup
	turn := make(chan struct{}) // closed once the message before has gone
	close(turn)
	finish := func() {
		<-turn
		beside.Wait()
	}
	gone := make(chan struct{})
	var goneOnce sync.Once
	ended := func() { goneOnce.Do(func() { close(gone) }) }
	type read struct {
		msg []byte
		err error
	}
	reads := make(chan read)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > MaxMessage {
				line, err = nil, errors.New("a message over 8 MB from the bridge")
			}
			select {
			case reads <- read{bytes.TrimSpace(line), err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var r read
		select {
		case r = <-reads:
		case <-gone:
			return ErrSessionGone
		}
		if msg := r.msg; len(msg) > 0 {
			if goesAtOnce(msg) {
				beside.Add(1)
				go func() {
					defer beside.Done()
					c.relay(ctx, msg, o, ended)
					if rid := cancelledID(msg); rid != "" {
						c.cancelCall(rid)
					}
				}()
			} else {
				prev, done := turn, make(chan struct{})
				turn = done
				go func() {
					defer close(done)
					<-prev
					select {
					case <-gone:
						return // nothing more goes to a session gone
					default:
					}
					c.relay(ctx, msg, o, ended)
				}()
			}
		}
		if r.err != nil {
			finish()
			select {
			case <-gone:
				return ErrSessionGone
			default:
			}
			if r.err == io.EOF {
				c.close()
				return nil
			}
			return r.err
		}
	}
}

// relay sends one message, and where it fails answers a request of the
// bridge's with an error (an answer of its own gets none). A session the
// server no longer knows is answered nothing: gone ends Run.
func (c *Client) relay(ctx context.Context, msg []byte, o *lines, gone func()) {
	err := c.send(ctx, msg, o)
	if err == nil {
		return
	}
	// The error may quote the server's own text: one printable line in
	// the log, and JSON-encoded in the answer, so no byte of the
	// server's breaks either (a line the bridge can't parse would leave
	// the call unanswered).
	why := textsafe.Line(err.Error())
	fmt.Fprintln(os.Stderr, "lnk-mcp-remote:", why)
	if errors.Is(err, ErrSessionGone) {
		gone()
		return
	}
	if id := idOf(msg); id != "" && !isAnswer(msg) {
		text, _ := json.Marshal(why) // a string always encodes
		fmt.Fprintf(o, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`+"\n", id, text)
	}
}

// lines writes each line in one write, one writer at a time.
type lines struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// goesAtOnce reports a message sent beside the one in flight: an answer
// to the server, or a notifications/cancelled.
func goesAtOnce(msg []byte) bool {
	if isAnswer(msg) {
		return true
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && len(m.ID) == 0 && m.Method == "notifications/cancelled"
}

// isAnswer reports a JSON-RPC response: an id, and no method.
func isAnswer(msg []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == nil && len(m.ID) > 0 && string(m.ID) != "null"
}

func (c *Client) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, h := range c.Headers {
		req.Header.Add(h[0], h[1])
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.mu.Lock()
	session, protocol := c.session, c.protocol
	c.mu.Unlock()
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if protocol != "" {
		req.Header.Set("Mcp-Protocol-Version", protocol)
	}
	return req, nil
}

// cancelledID is the request id a notifications/cancelled names, or "".
func cancelledID(msg []byte) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "notifications/cancelled" || len(m.Params.RequestID) == 0 {
		return ""
	}
	return string(m.Params.RequestID)
}

// callContext is ctx for the request id: ended by its time and by a
// notifications/cancelled naming it. done forgets it.
func (c *Client) callContext(ctx context.Context, id string) (_ context.Context, done func()) {
	limit := c.CallTime
	if limit <= 0 {
		limit = DefaultCallTime
	}
	ctx, stop := context.WithTimeoutCause(ctx, limit, fmt.Errorf("the call took longer than %s: its answer's stream is no longer read", limit))
	ctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]context.CancelCauseFunc{}
	}
	c.calls[id] = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
		cancel(nil)
		stop()
	}
}

// cancelCall ends the call to request id, where it is in flight.
func (c *Client) cancelCall(id string) {
	c.mu.Lock()
	cancel := c.calls[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
}

// send POSTs one message and writes the messages of its answer. An
// answer's event stream that ends before the answer is resumed (resume).
func (c *Client) send(ctx context.Context, msg []byte, w io.Writer) error {
	if id := idOf(msg); id != "" && !isAnswer(msg) {
		var done func()
		ctx, done = c.callContext(ctx, id)
		defer done()
	}
	req, err := c.request(ctx, http.MethodPost, msg)
	if err != nil {
		return err
	}
	withSession := req.Header.Get("Mcp-Session-Id") != ""
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return errors.New("the server could not be reached: " + scrub(err.Error(), c.URL))
	}
	defer resp.Body.Close()
	c.mu.Lock()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if v := protocolOf(msg); v != "" {
		c.protocol = v
	}
	c.mu.Unlock()
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case resp.StatusCode == http.StatusNotFound && withSession:
		return ErrSessionGone
	case resp.StatusCode/100 != 2:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("the server answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		id := ""
		if !isAnswer(msg) {
			id = idOf(msg) // a request's answer is awaited; a notification's none
		}
		// Each event is capped (copyEvents), the stream by the call's time.
		st, err := copyEvents(resp.Body, w, id)
		if cause := context.Cause(ctx); err != nil && cause != nil {
			return cause
		}
		if err != nil || id == "" || st.answered {
			return err
		}
		return c.resume(ctx, st, id, w)
	}
	body := io.LimitReader(resp.Body, MaxMessage+1)
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if len(b) > MaxMessage {
		return errors.New("an answer over 8 MB")
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	_, err = w.Write(append(bytes.ReplaceAll(b, []byte("\n"), nil), '\n'))
	return err
}

// close ends the server's session, as streamable HTTP asks.
func (c *Client) close() {
	c.mu.Lock()
	session := c.session
	c.mu.Unlock()
	if session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if req, err := c.request(ctx, http.MethodDelete, nil); err == nil {
		if resp, err := c.HTTP.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

func idOf(line []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	return string(m.ID)
}

func protocolOf(msg []byte) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "initialize" {
		return ""
	}
	return m.Params.ProtocolVersion
}

// scrub keeps a URL's query (which may carry a token) out of an error.
func scrub(s, url string) string {
	if i := strings.IndexByte(url, '?'); i >= 0 {
		s = strings.ReplaceAll(s, url[i:], "?…")
	}
	return s
}
