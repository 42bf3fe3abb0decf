package netbroker

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	"lnk.dev/lnk/internal/refusal"
)

// hopHeaders are a connection's own headers, never passed on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization",
	"Proxy-Authenticate", "Te", "Trailer", "Upgrade"}

// forward answers an absolute-form http:// request: its Host header must
// name the URL's host, the host is checked and dialed at a checked
// address, the request goes upstream in origin form, and the answer comes
// back with Connection: close. Redirects are passed back, never followed:
// the client's next request is checked like any other.
func (p *Proxy) forward(ctx context.Context, c net.Conn, req *http.Request, raw []byte, t Target) {
	ev := Event{Kind: "http", Host: t.Host.String(), Port: t.Port}
	if err := checkHostHeader(raw, t); err != nil {
		p.refuse(c, ev, err)
		return
	}
	if p.isLocalModel(t) {
		if err := filterLocalModel(req, t); err != nil {
			p.refuse(c, ev, err)
			return
		}
	}
	up, addr, err := p.dial(ctx, t.Host, t.Port)
	if err != nil {
		p.refuse(c, ev, err)
		return
	}
	defer up.Close()
	defer p.untrack(nil, up)
	ev.Addr = addr.String()
	for _, h := range req.Header.Values("Connection") {
		for _, name := range strings.Split(h, ",") {
			req.Header.Del(strings.TrimSpace(name))
		}
	}
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	hostport := t.Host.HostPort(t.Port)
	req.Host = hostport
	if t.Port == 80 {
		req.Host = strings.TrimSuffix(hostport, ":80")
	}
	req.URL = &url.URL{Scheme: "http", Host: hostport, Opaque: t.Path}
	req.RequestURI = ""
	req.Close = true
	upCount := &countingWriter{w: up}
	if err := req.Write(upCount); err != nil {
		p.refuse(c, ev, &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: "sending the request upstream failed: " + firstLine(err.Error())}})
		return
	}
	// The request is sent whole: what the client sends after it is never
	// read as a request (one per connection), and its end is the client
	// gone, which ends the forward, as an HTTP server takes a client's
	// close for a cancel. Else a server that never answers would hold
	// this connection's slot after its client gave up, without end.
	go watchGone(c, up)
	// The answer's head is read under a cap, as a request's is: a
	// server sending headers without end is cut, never held in memory.
	head := &recordingReader{r: up, left: MaxAnswerHeader, stopped: true}
	resp, err := http.ReadResponse(bufio.NewReader(head), req)
	if err != nil {
		reason := "malformed answer from upstream: " + firstLine(err.Error())
		if head.over {
			reason = fmt.Sprintf("the upstream answer's status line and headers (its head) are over %d bytes", MaxAnswerHeader)
		}
		p.refuse(c, ev, &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: reason}})
		return
	}
	head.left = -1 // the body is streamed, not held
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	resp.Close = true
	down := &countingWriter{w: c}
	resp.Write(down)
	ev.Decision, ev.Status, ev.Up, ev.Down = "allow", resp.StatusCode, upCount.n, down.n
	p.log(ev)
}

// watchGone closes up once the client c has ended (EOF, or an error:
// c closed when the forward returns), discarding anything it sends.
func watchGone(c, up net.Conn) {
	io.Copy(io.Discard, c)
	up.Close()
}

// checkHostHeader refuses an absolute-form request with two Host headers
// or one naming another host or port than its URL.
func checkHostHeader(raw []byte, t Target) error {
	tr := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	if _, err := tr.ReadLine(); err != nil {
		return malformed("malformed request line")
	}
	mh, err := tr.ReadMIMEHeader()
	if err != nil {
		return malformed("malformed headers")
	}
	hosts := mh.Values("Host")
	switch len(hosts) {
	case 0:
		return nil
	case 1:
	default:
		return &Refusal{Status: 400, Refusal: refusal.Refusal{Rule: KindMismatch, Reason: "more than one Host header"}}
	}
	h, port, err := parseAuthority(hosts[0], 80)
	if err != nil {
		return err
	}
	if h != t.Host || port != t.Port {
		return &Refusal{Status: 400, Refusal: refusal.Refusal{Rule: KindMismatch, Reason: fmt.Sprintf("Host header %q names another host than the URL's %s", hosts[0], t.Host.HostPort(t.Port))}}
	}
	return nil
}

// isLocalModel reports a target that is a local model's loopback port.
func (p *Proxy) isLocalModel(t Target) bool {
	loop := isLocalhostName(t.Host) || t.Host.IsAddr() && Classify(t.Host.Addr) == Loopback
	for _, port := range p.cfg.LocalModelPorts {
		if loop && port == t.Port {
			return true
		}
	}
	return false
}

// checkLocalModel refuses a host that is not a local model's by name
// (localhost, a loopback address: [Proxy.isLocalModel], whose requests
// are filtered or refused before they are dialed) but whose checked
// addresses reach a local model's port: a name resolving to loopback (a
// [lan] host, a hostile DNS answer) would pass the model's admin API and
// a CONNECT unfiltered. A local model is known by where the proxy
// connects, never by the name a request gives alone.
func (p *Proxy) checkLocalModel(h Host, port uint16, addrs []netip.AddrPort) error {
	if len(p.cfg.LocalModelPorts) == 0 || p.isLocalModel(Target{Host: h, Port: port}) || !slices.Contains(p.cfg.LocalModelPorts, port) {
		return nil
	}
	for _, a := range addrs {
		if Classify(a.Addr()) == Loopback {
			return &Refusal{Status: 403, Class: Loopback, Refusal: refusal.Refusal{Rule: KindRoute, Reason: fmt.Sprintf("%s resolves to loopback port %d, a local model's: reached as localhost:%d by plain http, for inference only", h, port, port)}}
		}
	}
	return nil
}

// filterLocalModel passes a local model's inference calls only, reading
// the body (at most 8 MB) to filter it.
func filterLocalModel(req *http.Request, t Target) error {
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxInferenceBody+1))
	if err != nil {
		return malformed("reading the request's body failed")
	}
	if len(body) > MaxInferenceBody {
		return &Refusal{Status: 413, Refusal: refusal.Refusal{Rule: KindTooLarge, Reason: fmt.Sprintf("an inference request is at most %d bytes", MaxInferenceBody)}}
	}
	body, err = FilterInference(req.Method, t.Path, body)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	req.ContentLength = int64(len(body))
	req.TransferEncoding = nil
	return nil
}

// MaxAnswerHeader bounds an upstream answer's status line and headers.
const MaxAnswerHeader = 256 << 10
