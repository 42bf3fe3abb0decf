package netbroker

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/secret"
)

// SealedSource hands a sealed secret's value, the one host it may be
// added for and the request headers it goes in there ([sealedgrant.Seal]).
// sealedgrant.NetClient, the keybroker's channel, is one.
type SealedSource interface {
	SealedGrant(ctx context.Context, agentID, name string) (*secret.Value, sealedgrant.Seal, error)
}

// MaxRouteBody is the largest request body a route takes (8 MB).
const MaxRouteBody = 8 << 20

// NewPlaceholder makes the placeholder a sandbox is told in place of a
// sealed secret: new at each start, never made from the value.
func NewPlaceholder(name string) string {
	var b [16]byte
	rand.Read(b[:])
	return "lnk-sealed-" + strings.ToLower(name) + "-" + hex.EncodeToString(b[:])
}

// Sealed serves /_link/s/<route secret>/sealed/<NAME>/… : the request
// goes over https to NAME's own host alone, with its placeholder
// replaced by the value in the headers NAME's grant names (where the
// host authenticates; Authorization by default) and nowhere else — a
// placeholder in a body, a query, a path or another header goes as it
// is, so nothing the host stores, transforms or hands back from those
// can carry the value. The host is asked for an uncompressed, whole
// answer (Accept-Encoding: identity, no Range), and an answer that is
// compressed anyway or partial is refused: the value is replaced by the
// placeholder in what comes back, which needs it written out whole. A
// redirect is passed back, never followed; plain http is never used.
type Sealed struct {
	AgentID string
	// RouteSecret is the proxy's own secret in every route's path.
	RouteSecret string
	// Placeholders maps each sealed secret's name to its placeholder.
	Placeholders map[string]string
	Source       SealedSource
	// Checker judges the secret's host's addresses like any other dial:
	// share the proxy's (Proxy.Checker).
	Checker *Checker
	// RootCAs are the CAs trusted upstream; the system's if nil.
	RootCAs *x509.CertPool
	// Log gets one event per request, with no path, query or value.
	Log func(Event)
	// Inference names the secrets that are a model's key: their routes
	// pass inference calls only (see [FilterInference]).
	Inference map[string]bool
}

// Checker is the proxy's address checker, for routes that dial.
func (p *Proxy) Checker() *Checker { return p.checker }

func (s *Sealed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev := Event{Time: time.Now(), Agent: s.AgentID, Kind: "route"}
	fail := func(ref *Refusal) {
		ev.Decision, ev.Rule, ev.Reason, ev.Status = "refuse", ref.Rule, ref.Reason, ref.Status
		s.Log(ev)
		w.Header().Set("X-Lnk-Refused", ref.Rule)
		http.Error(w, strings.TrimSuffix(ref.Body(), "\n"), ref.Status)
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), RoutePrefix+"s/")
	routeSecret, rest, _ := strings.Cut(rest, "/")
	if !ok || subtle.ConstantTimeCompare([]byte(routeSecret), []byte(s.RouteSecret)) != 1 || s.RouteSecret == "" {
		fail(&Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindAuth, Reason: "wrong route secret"}})
		return
	}
	rest, ok = strings.CutPrefix(rest, "sealed/")
	name, path, _ := strings.Cut(rest, "/")
	placeholder, known := s.Placeholders[name]
	if !ok || !known {
		fail(&Refusal{Status: 404, Refusal: refusal.Refusal{Rule: KindRoute, Reason: "no sealed secret of that name for this sandbox"}})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRouteBody))
	if err != nil {
		fail(&Refusal{Status: 413, Refusal: refusal.Refusal{Rule: KindTooLarge, Reason: fmt.Sprintf("a route's body is at most %d bytes", MaxRouteBody)}})
		return
	}
	if s.Inference[name] {
		f, err := filterInference(r.Method, "/"+path, body)
		if err != nil {
			var ref *Refusal
			if !errors.As(err, &ref) {
				ref = malformed("an inference request could not be filtered")
			}
			fail(ref)
			return
		}
		body = f.body
		ev.Reason = fmt.Sprintf("a model's key: inference only; %d provider tools removed", f.removed)
		if f.dropped > 0 {
			ev.Reason += fmt.Sprintf(", %d fields not in the API's list dropped", f.dropped)
		}
	}
	value, seal, err := s.Source.SealedGrant(r.Context(), s.AgentID, name)
	if err != nil {
		fail(&Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: "the keybroker did not hand the secret: " + firstLine(err.Error())}})
		return
	}
	defer value.Destroy()
	h, err := ParseHost(seal.Host)
	if err != nil {
		fail(&Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: "the secret's host is malformed"}})
		return
	}
	if err := checkSealHeaders(seal.Headers); err != nil {
		fail(&Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: "the secret's grant names no header it may go in: " + firstLine(err.Error())}})
		return
	}
	ev.Host, ev.Port = h.String(), 443
	if ref := misplaced(r.Header, r.URL.RawQuery, seal.Headers, placeholder, name, h.String()); ref != nil {
		fail(ref)
		return
	}
	ph, val := []byte(placeholder), value.Bytes()
	out, err := http.NewRequestWithContext(r.Context(), r.Method, "https://"+h.HostPort(443)+"/"+path, bytes.NewReader(body))
	if err != nil {
		fail(malformed("a route's path does not make a URL"))
		return
	}
	out.URL.RawQuery = r.URL.RawQuery
	// The one copy of the value outside value's locked memory: net/http
	// takes a header as a string, which can't be wiped. Nothing holds
	// it once the request is written; the process is undumpable, so no
	// other process of the owner reads it meanwhile (SECURITY.md).
	sealedHeaders(out.Header, r.Header, seal.Headers, placeholder, string(val))
	out.Host = h.String()
	client := &http.Client{
		Transport:     s.transport(h),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(out)
	if err != nil {
		var ref *Refusal
		if errors.As(err, &ref) {
			// No grant opens an address the secret's host must never
			// have: a hint to grant a port or a LAN host would not help.
			r := *ref
			r.Hint = ""
			r.Reason += "; a sealed secret goes only to a public address of its host"
			fail(&r)
			return
		}
		fail(&Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: fmt.Sprintf("%s did not answer over https", h)}})
		return
	}
	defer resp.Body.Close()
	if ref := wholeAnswer(resp, h); ref != nil {
		fail(ref)
		return
	}
	for k, vs := range resp.Header {
		if isHop(k) {
			continue
		}
		for _, v := range vs {
			if bytes.Contains([]byte(v), val) { // no string copy of the value
				v = string(bytes.ReplaceAll([]byte(v), val, ph))
			}
			w.Header().Add(k, v)
		}
	}
	w.Header().Del("Content-Length") // the scrubbed body may differ in length
	w.WriteHeader(resp.StatusCode)
	sw := &scrubWriter{w: w, old: val, new: ph}
	n, _ := io.Copy(sw, resp.Body)
	sw.flush()
	ev.Decision, ev.Status, ev.Up, ev.Down = "allow", resp.StatusCode, int64(len(body)), n
	s.Log(ev)
}

func isHop(k string) bool {
	for _, h := range hopHeaders {
		if strings.EqualFold(k, h) {
			return true
		}
	}
	return strings.EqualFold(k, "Host")
}

// transport dials only h's checked addresses, on 443, over TLS for h.
func (s *Sealed) transport(h Host) *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			addrs, err := s.Checker.CheckPublic(ctx, h, 443)
			if err != nil {
				return nil, err
			}
			d := net.Dialer{Timeout: 10 * time.Second}
			var last error
			for _, a := range addrs {
				c, err := d.DialContext(ctx, "tcp", a.String())
				if err == nil {
					return c, nil
				}
				last = err
			}
			return nil, last
		},
		TLSClientConfig:   &tls.Config{ServerName: h.String(), RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
		// Never ask for gzip: the answer is scrubbed as it comes.
		DisableCompression: true,
	}
}

// scrubWriter replaces old with new in a stream, holding back only a
// tail that could still begin old.
type scrubWriter struct {
	w        io.Writer
	old, new []byte
	carry    []byte
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	buf := append(s.carry, p...)
	s.carry = nil
	for {
		i := bytes.Index(buf, s.old)
		if i < 0 {
			break
		}
		if _, err := s.w.Write(buf[:i]); err != nil {
			return 0, err
		}
		if _, err := s.w.Write(s.new); err != nil {
			return 0, err
		}
		buf = buf[i+len(s.old):]
	}
	keep := 0
	for k := min(len(buf), len(s.old)-1); k > 0; k-- {
		if bytes.HasPrefix(s.old, buf[len(buf)-k:]) {
			keep = k
			break
		}
	}
	if _, err := s.w.Write(buf[:len(buf)-keep]); err != nil {
		return 0, err
	}
	s.carry = append([]byte(nil), buf[len(buf)-keep:]...)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return len(p), nil
}

func (s *scrubWriter) flush() {
	s.w.Write(s.carry)
	s.carry = nil
}
