package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"lnk.dev/lnk/internal/netclass"
)

// Env names the model's address for the memory service.
const Env = "LNK_MEMORY_MODEL"

// MaxAnswer bounds the bytes of one answer read (security.txt: 64 MiB).
const MaxAnswer = 64 << 20

// StartWait bounds how long [Client.Start] waits for the model.
const StartWait = 10 * time.Second

// QueryWait bounds how long a search waits for its query's vector
// (security.txt: the model waited at most 10 s); past it the search is
// by words alone and the model is down until its retry.
const QueryWait = 10 * time.Second

// Retry is how often a model that failed is asked again.
const Retry = 30 * time.Second

// ErrDown is Embed's answer while the model is not answering and its
// next try is not due: the engine searches by words meanwhile.
var ErrDown = errors.New("the memory model is not answering")

// ParseAddr reads an address as $LNK_MEMORY_MODEL holds it
// (127.0.0.1:PORT or [::1]:PORT) and refuses all but a loopback address
// with a port.
func ParseAddr(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s=%q is not an address and port (127.0.0.1:PORT): refused", Env, s)
	}
	if c := netclass.Classify(ap.Addr()); c != netclass.Loopback {
		return netip.AddrPort{}, fmt.Errorf("%s=%q is %s %s, and Link Memory calls only a model on this machine's loopback: refused", Env, s, c.Article(), c)
	}
	if ap.Port() == 0 || ap.Addr().Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("%s=%q has no port, or a zone: refused", Env, s)
	}
	return ap, nil
}

// Client asks one model for embeddings.
type Client struct {
	addr  netip.AddrPort
	http  *http.Client
	retry time.Duration
	logf  func(string, ...any)
	// QueryWait bounds [Client.EmbedQuery]; [QueryWait] unless a test
	// shortens it before the first call.
	QueryWait time.Duration

	mu   sync.Mutex
	up   bool
	next time.Time // while down: when the model is asked again
}

// New makes a client of the model at addr, which must be loopback;
// retry is how often a failed model is asked again ([Retry]); logf gets
// one line each time the model stops or starts answering.
func New(addr netip.AddrPort, retry time.Duration, logf func(string, ...any)) (*Client, error) {
	if c := netclass.Classify(addr.Addr()); c != netclass.Loopback || addr.Port() == 0 {
		return nil, fmt.Errorf("the memory model's address %s is not a loopback address and port: refused", addr)
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr.String())
		},
		MaxIdleConns:          1,
		ResponseHeaderTimeout: time.Minute,
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Client{
		addr:      addr,
		retry:     retry,
		logf:      logf,
		QueryWait: QueryWait,
		http: &http.Client{
			Transport: tr,
			Timeout:   2 * time.Minute,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}, nil
}

// Up reports whether the model answered its last call.
func (c *Client) Up() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up
}

// Start asks the model until it answers or wait passes; either way the
// service goes on, searching by words until the model answers.
func (c *Client) Start(ctx context.Context, wait time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if _, err := c.call(ctx, []string{"link"}); err == nil {
			c.mark(nil)
			return true
		}
		select {
		case <-ctx.Done():
			c.mark(errors.New("no answer within the start's wait"))
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Embed returns one unit vector per text, or ErrDown while the model is
// down and its retry not due, or why the call failed (the model is then
// down until the retry).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if !c.due() {
		return nil, ErrDown
	}
	v, err := c.call(ctx, texts)
	c.mark(err)
	return v, err
}

// due reports whether the model may be called: it answered last, or its
// retry is due.
func (c *Client) due() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up || !time.Now().Before(c.next)
}

// EmbedQuery is a search's query vector, waited for at most
// c.QueryWait: a model that does not answer by then is down until its
// retry (ErrDown meanwhile), and the search is by words alone.
func (c *Client) EmbedQuery(ctx context.Context, query string) ([]float32, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.QueryWait, fmt.Errorf("no answer to a search's query within %s", c.QueryWait))
	defer cancel()
	if !c.due() {
		return nil, ErrDown
	}
	v, err := c.call(ctx, []string{query})
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	c.mark(err)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

func (c *Client) mark(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil && !c.up:
		c.up = true
		c.logf("memory: the model at %s answers: search by meaning and words", c.addr)
	case err != nil:
		if c.up || c.next.IsZero() {
			c.logf("memory: the model at %s does not answer (%v): search by words, asked again every %s", c.addr, err, c.retry)
		}
		c.up = false
		c.next = time.Now().Add(c.retry)
	}
}

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type answer struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

func (c *Client) call(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: "default", Input: texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.addr.String()+"/v1/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode/100 == 3 {
		return nil, fmt.Errorf("the model answered a redirect (%s): refused, never followed", res.Status)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the model answered %s", res.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, MaxAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxAnswer {
		return nil, fmt.Errorf("the model's answer is past %d bytes: cut, unused", MaxAnswer)
	}
	return decode(raw, len(texts))
}

// decode checks an answer: n vectors, indexed 0..n-1 once each, of one
// nonzero length, every number finite; each is scaled to length 1.
func decode(raw []byte, n int) ([][]float32, error) {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, errors.New("the model's answer is not a list of embeddings")
	}
	if len(a.Data) != n {
		return nil, fmt.Errorf("the model gave %d embeddings for %d texts", len(a.Data), n)
	}
	out := make([][]float32, n)
	dims := -1
	for _, d := range a.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("the model's embedding index %d is out of order", d.Index)
		}
		if dims == -1 {
			dims = len(d.Embedding)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != dims {
			return nil, errors.New("the model's embeddings differ in length")
		}
		var norm float64
		for _, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, errors.New("the model's embedding holds a number that is not finite")
			}
			norm += x * x
		}
		v := make([]float32, dims)
		if norm > 0 {
			norm = math.Sqrt(norm)
			for i, x := range d.Embedding {
				v[i] = float32(x / norm)
			}
		}
		out[d.Index] = v
	}
	return out, nil
}

// Addr is the model's address.
func (c *Client) Addr() netip.AddrPort { return c.addr }
