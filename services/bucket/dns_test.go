package bucket

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsPeer is a DNS server on 127.0.0.1 (UDP) that answers A and AAAA
// for the names it holds, and "no such name" for any other.
type dnsPeer struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	addr    string
}

// startDNS serves answers until the test ends.
func startDNS(t *testing.T, answers map[string][]netip.Addr) *dnsPeer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	d := &dnsPeer{answers: answers, addr: pc.LocalAddr().String()}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := d.answer(buf[:n]); out != nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return d
}

// set replaces the answers for name.
func (d *dnsPeer) set(name string, addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answers[name] = addrs
}

func (d *dnsPeer) answer(q []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(qs[0].Name.String()), ".")
	d.mu.Lock()
	addrs, ok := d.answers[name]
	d.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !ok {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	b.StartQuestions()
	b.Question(qs[0])
	b.StartAnswers()
	rr := dnsmessage.ResourceHeader{Name: qs[0].Name, Class: dnsmessage.ClassINET, TTL: 1}
	for _, a := range addrs {
		switch {
		case qs[0].Type == dnsmessage.TypeA && a.Is4():
			b.AResource(rr, dnsmessage.AResource{A: a.As4()})
		case qs[0].Type == dnsmessage.TypeAAAA && a.Is6():
			b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}

// resolver is Go's own resolver asking this server alone.
func (d *dnsPeer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", d.addr)
	}}
}
