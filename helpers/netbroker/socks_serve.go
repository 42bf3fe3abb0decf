package netbroker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"lnk.dev/lnk/internal/refusal"
)

// isSOCKS reports a connection whose first byte is SOCKS5's version:
// no HTTP request line begins with 0x05. It waits for that byte under
// the header timeout already set on the connection.
func isSOCKS(br *bufio.Reader) bool {
	b, err := br.Peek(1)
	return err == nil && b[0] == socksVersion
}

// socks serves one SOCKS5 connection: the greeting, username/password
// with the proxy's secret (no other method is accepted), then one
// CONNECT, judged and dialed by [Proxy.dial] exactly as a CONNECT
// request is, logged as kind "socks". The handshake is bounded by the
// header timeout and the header cap the caller set on c and br.
func (p *Proxy) socks(c net.Conn, br *bufio.Reader) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := Event{Kind: "socks"}
	fail := func(err error) {
		var se *socksError
		if !errors.As(err, &se) {
			se = &socksError{code: socksGeneralFailure, ref: &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: firstLine(err.Error())}}}
		}
		p.socksRefuse(c, ev, se)
	}
	userPass, err := readGreeting(br)
	if err != nil {
		c.Write([]byte{socksVersion, socksNoAcceptable}) // the only refusal a greeting has
		p.socksRefuse(c, ev, noReply(err))
		return
	}
	if !userPass || p.cfg.SOCKSSecret == "" {
		reason := "socks5: only username/password authentication with the sandbox's secret is accepted"
		if p.cfg.SOCKSSecret == "" {
			reason = "socks5: this proxy has no secret to authenticate a SOCKS client with"
		}
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte{socksVersion, socksNoAcceptable})
		p.socksRefuse(c, ev, &socksError{ref: &Refusal{Status: 407, Refusal: refusal.Refusal{Rule: KindAuth, Reason: reason}}})
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksUserPass}); err != nil {
		return
	}
	ok, err := readUserPass(br, p.cfg.SOCKSSecret)
	if err != nil {
		c.Write([]byte{0x01, 0x01}) // RFC 1929's failure
		p.socksRefuse(c, ev, noReply(err))
		return
	}
	if !ok {
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte{0x01, 0x01})
		p.socksRefuse(c, ev, &socksError{ref: &Refusal{Status: 407, Refusal: refusal.Refusal{Rule: KindAuth, Reason: "socks5: wrong username or secret"}}})
		return
	}
	if _, err := c.Write([]byte{0x01, 0x00}); err != nil {
		return
	}
	req, err := readSOCKSRequest(br)
	if err != nil {
		fail(err)
		return
	}
	c.SetReadDeadline(time.Time{})
	ev.Host, ev.Port = req.Host.String(), req.Port
	t := Target{Kind: Tunnel, Host: req.Host, Port: req.Port}
	if p.isLocalModel(t) {
		fail(&socksError{code: socksNotAllowed, ref: &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: fmt.Sprintf("port %d is a local model's: reached by plain http for inference only, never by a tunnel", t.Port)}}})
		return
	}
	up, addr, err := p.dial(ctx, t.Host, t.Port)
	if err != nil {
		var ref *Refusal
		if errors.As(err, &ref) {
			err = &socksError{code: socksCode(ref), ref: ref}
		}
		fail(err)
		return
	}
	defer up.Close()
	defer p.untrack(nil, up)
	ev.Addr = addr.String()
	if _, err := c.Write(socksReply(socksOK)); err != nil {
		return
	}
	p.join(c, br, up, ev)
}

// socksRefuse logs a refusal once and, where the exchange has a reply
// for it, sends its SOCKS5 reply code; the connection then closes.
func (p *Proxy) socksRefuse(c net.Conn, ev Event, se *socksError) {
	r := se.ref
	ev.Decision, ev.Rule, ev.Reason, ev.Status = "refuse", r.Rule, r.Reason, r.Status
	p.log(ev)
	if se.code != 0 {
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		c.Write(socksReply(se.code))
	}
}

// noReply is a malformed greeting or authentication, whose stage's own
// failure the caller has sent.
func noReply(err error) *socksError {
	var se *socksError
	if !errors.As(err, &se) {
		return &socksError{ref: malformed("socks5: " + firstLine(err.Error()))}
	}
	return &socksError{ref: se.ref}
}
