package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"lnk.dev/lnk/internal/netclass"
)

// check resolves t's host once (an address is itself) and judges every
// answer by netclass's one routine ([netclass.Resolve], the proxy's and
// the buckets' too): one that is not public refuses the host whole,
// unless --private-host names it, and one that cannot be judged (this
// machine's own addresses unknown) refuses it even then. It returns the
// addresses the hop may dial, and only those are dialled: no second
// lookup between the check and the connection (no DNS rebinding).
func (w *Web) check(ctx context.Context, t target) ([]netip.AddrPort, error) {
	private := w.private.has(t.host)
	addrs, err := netclass.Resolve(ctx, w.resolver, w.cfg.Own, t.host, func(a netip.Addr, cl netclass.Class) error {
		if private || cl == netclass.Public {
			return nil
		}
		return w.refuseClass(t.host, a, cl)
	})
	var unresolved *netclass.UnresolvedError
	var unchecked *netclass.UncheckedError
	switch {
	case errors.As(err, &unresolved):
		if cause := context.Cause(ctx); cause != nil {
			return nil, cause
		}
		return nil, refusef("%s does not resolve", t.host)
	case errors.As(err, &unchecked):
		return nil, refusef("%s cannot be checked: %v", t.host, unchecked.Err)
	case err != nil:
		return nil, err
	}
	return netclass.WithPort(addrs, t.port), nil
}

// refuseClass says why host is never fetched: what it is, or what it
// resolves to, and the flag that would fetch it.
func (w *Web) refuseClass(h netclass.Host, a netip.Addr, cl netclass.Class) *Refusal {
	r := refusef("%s resolves to %s %s (%s): Link Web never fetches this machine or its networks", h, cl.Article(), cl, a)
	if h.IsAddr() {
		r.Reason = fmt.Sprintf("%s is %s %s: Link Web never fetches this machine or its networks", h, cl.Article(), cl)
	}
	r.Hint = "lnk sandbox tool add web -- lnk-web --private-host " + h.String() + " (with the --env it had: add replaces the tool; that host is then fetched wherever it resolves)"
	return r
}

// guard is the tool's transport: each hop's URL is read and its host
// checked before the hop is sent, and the dialer connects only to the
// addresses the latest check returned for that host and port, or to the
// owner's proxy. A connection it keeps for a host was dialled to an
// address checked for it; a host refused now is refused before any
// connection is looked for.
type guard struct {
	w     *Web
	inner *http.Transport

	mu      sync.Mutex
	plans   map[string][]netip.AddrPort // host:port → the checked addresses
	proxies map[string]bool             // the proxies the hops go through
}

func (w *Web) newGuard() *guard {
	g := &guard{w: w, plans: map[string][]netip.AddrPort{}, proxies: map[string]bool{}}
	g.inner = &http.Transport{
		DialContext:            g.dial,
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: 64 << 10,
		// No timeout of the transport's own: each call's context bounds
		// the whole of it (the call's time), and says so when it ends.
	}
	if w.cfg.Proxy != nil {
		g.inner.Proxy = func(r *http.Request) (*url.URL, error) { return w.cfg.Proxy(r.URL) }
	}
	if w.tlsConfig != nil {
		g.inner.TLSClientConfig = w.tlsConfig.Clone()
	}
	return g
}

// RoundTrip checks one hop, then sends it with its host written as the
// check read it (0x7f.1 as 127.0.0.1), so the dialer is asked for
// exactly the host and port it checked.
func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	t, err := parseTarget(req.URL)
	if err != nil {
		return nil, err
	}
	addrs, err := g.w.check(req.Context(), t)
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	host := t.host.String()
	if t.host.IsAddr() && t.host.Addr.Is6() {
		host = "[" + host + "]"
	}
	if req.URL.Port() != "" {
		host = t.hostPort()
	}
	r.URL.Host, r.Host = host, ""
	g.mu.Lock()
	g.plans[t.hostPort()] = addrs
	if g.inner.Proxy != nil {
		p, err := g.inner.Proxy(r)
		if err != nil {
			g.mu.Unlock()
			return nil, fmt.Errorf("the proxy from the tool's environment: %w", err)
		}
		if p != nil {
			g.proxies[proxyAddr(p)] = true
		}
	}
	g.mu.Unlock()
	return g.inner.RoundTrip(r)
}

// proxyAddr is where the transport dials proxy p: its host and port,
// the scheme's port where none is written.
func proxyAddr(p *url.URL) string {
	port := p.Port()
	if port == "" {
		switch p.Scheme {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(p.Hostname()), port)
}

var errUnplanned = errors.New("no check allowed it")

// dial connects to the owner's proxy, or to the addresses a hop's check
// returned for addr, in order; anything else is refused.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	proxy := g.proxies[addr]
	addrs, planned := g.plans[addr]
	g.mu.Unlock()
	var d net.Dialer
	if proxy {
		return d.DialContext(ctx, network, addr) // the owner's proxy: it resolves and connects
	}
	if !planned {
		return nil, refusef("the transport asked to dial %s: %v", addr, errUnplanned)
	}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", a.String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}
