package netbroker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"

	"lnk.dev/lnk/internal/procs"
	"lnk.dev/lnk/internal/refusal"
)

// Config is one sandbox's proxy.
type Config struct {
	// Rules are the sandbox's network grants (see [RulesFrom]). Required.
	Rules *Rules
	// Resolver looks names up once per request; net.DefaultResolver if nil.
	Resolver Resolver
	// Own knows this machine's addresses, never dialed. If nil, New
	// opens an [OwnWatch] (which Close closes), and fails if it cannot:
	// lnk-netbroker opens its own before its seccomp filter forbids it.
	Own OwnSet
	// Log receives one event per connection, request or route; JSON
	// lines on stderr if nil.
	Log func(Event)
	// Routes serves /_link/… (the tool bridge, sealed secrets); every
	// route is refused with 404 if nil.
	Routes http.Handler
	// MaxConns bounds the connections open at once (256 if 0).
	MaxConns int
	// HeaderTimeout bounds reading a request's headers (10 s if 0).
	HeaderTimeout time.Duration
	// MaxHeaderBytes bounds a request line and headers (32 KiB if 0).
	MaxHeaderBytes int
	// DrainTimeout bounds how long a tunnel's server may stay silent
	// once its client has ended (30 s if 0): read on while it sends,
	// closed when it doesn't.
	DrainTimeout time.Duration
	// DialTimeout bounds each dial of a checked address (10 s if 0).
	DialTimeout time.Duration
	// Now is the clock for per_minute (time.Now if nil).
	Now func() time.Time
	// ToolBridge is the channel to the sandbox's tool bridge
	// (services/toolbridge; a SOCK_SEQPACKET socket, internal/connpass):
	// the connection of each request under /_link/s/<secret>/mcp/ is
	// passed to it, with the bytes read of it so far, and the bridge
	// checks the secret and answers. Refused with 404 if nil.
	ToolBridge *net.UnixConn
	// LocalModelPorts are the [localhost] ports a local model serves on:
	// reached by plain http requests for inference only (its admin API
	// gets a 403), never by CONNECT.
	LocalModelPorts []uint16
	// SOCKSSecret is the password a SOCKS5 client must give (user
	// [SOCKSUser]); SOCKS5 is refused if empty (socks_serve.go).
	SOCKSSecret string
	// AdaptProcs runs the process on one P while it serves a connection
	// or two at a time, and on all of them under more (internal/procs):
	// for lnk-netbroker, whose process is the proxy's alone.
	AdaptProcs bool
}

// Proxy is one sandbox's filtering proxy. Make it with [New], serve it
// with [Proxy.Serve], end it with [Proxy.Close].
type Proxy struct {
	cfg     Config
	checker *Checker
	limit   *limiter
	slots   chan struct{}
	procs   *procs.Adapter // nil unless Config.AdaptProcs
	own     *OwnWatch      // the watch New opened, closed by Close; nil if given

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// New checks cfg and fills in its defaults.
func New(cfg Config) (*Proxy, error) {
	if cfg.Rules == nil {
		return nil, errors.New("netbroker: no rules")
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	var ownWatch *OwnWatch
	if cfg.Own == nil {
		w, err := WatchOwnAddrs()
		if err != nil {
			return nil, fmt.Errorf("netbroker: %w", err)
		}
		cfg.Own, ownWatch = w, w
	}
	if cfg.Log == nil {
		cfg.Log = JSONLog(os.Stderr)
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 256
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = 10 * time.Second
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 32 << 10
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Proxy{
		cfg:     cfg,
		checker: &Checker{Rules: cfg.Rules, Resolver: cfg.Resolver, Own: cfg.Own},
		limit:   newLimiter(cfg.Rules.PerMinute, cfg.Now),
		slots:   make(chan struct{}, cfg.MaxConns),
		lns:     map[net.Listener]bool{},
		conns:   map[net.Conn]bool{},
		own:     ownWatch,
	}
	if cfg.AdaptProcs {
		p.procs = procs.New()
	}
	return p, nil
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("netbroker: proxy closed")

// Serve accepts connections on ln until Close, serving each on its own
// goroutine.
func (p *Proxy) Serve(ln net.Listener) error {
	if !p.track(ln, nil) {
		ln.Close()
		return ErrClosed
	}
	defer p.untrack(ln, nil)
	for {
		c, err := ln.Accept()
		if err != nil {
			if p.isClosed() {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !p.track(nil, c) {
			c.Close()
			return ErrClosed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// The slot is taken before the first read, so connections
			// that send nothing are bounded as any are.
			if !p.takeSlot(c) {
				p.untrack(nil, c)
				c.Close()
				return
			}
			defer func() { <-p.slots; p.procs.End() }()
			defer p.untrack(nil, c)
			defer c.Close()
			p.serveConn(c)
		}()
	}
}

// Close stops every listener and connection and waits for their
// goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if p.own != nil {
		p.own.Close()
	}
	return nil
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// track records ln or c so Close reaches it; false once closed.
func (p *Proxy) track(ln net.Listener, c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if ln != nil {
		p.lns[ln] = true
	}
	if c != nil {
		p.conns[c] = true
	}
	return true
}

func (p *Proxy) untrack(ln net.Listener, c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.lns, ln)
	delete(p.conns, c)
}

// readers are the 4 KiB request readers, kept for the next connection:
// nothing holds one after serveConn returns.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// takeSlot takes one of the proxy's MaxConns slots for c, or refuses c
// (429, logged) when all are taken.
func (p *Proxy) takeSlot(c net.Conn) bool {
	select {
	case p.slots <- struct{}{}:
		p.procs.Begin()
		return true
	default:
		p.refuse(c, Event{Kind: "connect"}, &Refusal{Status: 429, Refusal: refusal.Refusal{Rule: KindBusy, Reason: fmt.Sprintf("this sandbox already has %d connections open through its proxy", p.cfg.MaxConns)}})
		return false
	}
}

// serveConn reads one request and answers it (its slot taken by Serve): a tunnel, a forwarded
// request or a route. One request per connection keeps every decision
// tied to one line of the log.
func (p *Proxy) serveConn(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	rec := &recordingReader{r: c, left: p.cfg.MaxHeaderBytes}
	br := readers.Get().(*bufio.Reader)
	br.Reset(rec)
	defer func() { br.Reset(nil); readers.Put(br) }()
	if isSOCKS(br) {
		p.socks(c, br)
		return
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		var ne net.Error
		switch {
		case rec.over:
			p.refuse(c, Event{Kind: "http"}, &Refusal{Status: 431, Refusal: refusal.Refusal{Rule: KindTooLarge, Reason: fmt.Sprintf("request line and headers over %d bytes", p.cfg.MaxHeaderBytes)}})
		case errors.As(rec.err, &ne) && ne.Timeout():
			p.refuse(c, Event{Kind: "http"}, &Refusal{Status: 408, Refusal: refusal.Refusal{Rule: KindMalformed, Reason: fmt.Sprintf("no complete request within %s", p.cfg.HeaderTimeout)}})
		case len(rec.buf) == 0:
			// closed before a byte: not a request, nothing to log
		default:
			p.refuse(c, Event{Kind: "http"}, malformed("malformed request: not an HTTP/1.x request line and headers"))
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	rec.left = -1 // the body is bounded by its own handler, not the header cap
	raw := rec.stopRecording()
	t, err := ParseTarget(req.Method, req.RequestURI)
	if err != nil {
		p.refuse(c, Event{Kind: "http"}, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch t.Kind {
	case Tunnel:
		p.tunnel(ctx, c, br, t)
	case Forward:
		p.forward(ctx, c, req, raw, t)
	case Route:
		if isToolRoute(t.Path) {
			p.toolRoute(c, req, raw)
			return
		}
		p.route(c, raw)
	}
}

// refuse logs r once and answers it on c.
func (p *Proxy) refuse(c net.Conn, ev Event, err error) {
	var r *Refusal
	if !errors.As(err, &r) {
		r = &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: firstLine(err.Error())}}
	}
	ev.Decision, ev.Rule, ev.Reason, ev.Status = "refuse", r.Rule, r.Reason, r.Status
	p.log(ev)
	body := r.Body()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Lnk-Refused: %s\r\n\r\n%s",
		r.Status, http.StatusText(r.Status), len(body), r.Rule, body)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	// Read on a little before closing, so a client still sending its
	// request reads the refusal rather than a reset.
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	io.CopyN(io.Discard, c, 64<<10)
}

func (p *Proxy) log(ev Event) {
	ev.Time = p.cfg.Now()
	if ev.Agent == "" {
		ev.Agent = p.cfg.Rules.Agent
	}
	p.cfg.Log(ev)
}

// dial checks h:port (and that it reaches a local model only by its own
// name: [Proxy.checkLocalModel]) and dials the first checked address that answers.
func (p *Proxy) dial(ctx context.Context, h Host, port uint16) (net.Conn, netip.AddrPort, error) {
	addrs, err := p.checker.Check(ctx, h, port)
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	if err := p.checkLocalModel(h, port, addrs); err != nil {
		return nil, netip.AddrPort{}, err
	}
	if !p.limit.allow() {
		return nil, netip.AddrPort{}, &Refusal{Status: 429, Refusal: refusal.Refusal{Rule: KindRate, Reason: fmt.Sprintf("over this sandbox's [internet] per_minute of %d", p.cfg.Rules.PerMinute)}}
	}
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	var last error
	for _, a := range addrs {
		up, err := d.DialContext(ctx, "tcp", a.String())
		if err == nil {
			if !p.track(nil, up) {
				up.Close()
				return nil, a, ErrClosed
			}
			return up, a, nil
		}
		last = err
	}
	return nil, netip.AddrPort{}, &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: fmt.Sprintf("%s did not answer on port %d: %s", h, port, firstLine(last.Error()))}}
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
