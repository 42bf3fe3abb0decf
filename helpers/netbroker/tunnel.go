package netbroker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"lnk.dev/lnk/internal/refusal"
)

// tunnel answers CONNECT: check, dial the checked address, then copy
// both ways (see [pump]).
func (p *Proxy) tunnel(ctx context.Context, c net.Conn, br *bufio.Reader, t Target) {
	ev := Event{Kind: "connect", Host: t.Host.String(), Port: t.Port}
	if p.isLocalModel(t) {
		p.refuse(c, ev, &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: fmt.Sprintf("port %d is a local model's: reached by plain http for inference only, never by CONNECT", t.Port)}})
		return
	}
	up, addr, err := p.dial(ctx, t.Host, t.Port)
	if err != nil {
		p.refuse(c, ev, err)
		return
	}
	defer up.Close()
	defer p.untrack(nil, up)
	ev.Addr = addr.String()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	p.join(c, br, up, ev)
}

// join carries a granted tunnel: what the client sent early (buffered
// with its request), then both ways until both end; then its one log
// line with the bytes each way.
func (p *Proxy) join(c net.Conn, br *bufio.Reader, up net.Conn, ev Event) {
	var early int64
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		w, err := up.Write(b)
		early = int64(w)
		if err != nil {
			return
		}
	}
	upN, downN := copyBoth(c, up, p.cfg.DrainTimeout)
	ev.Decision, ev.Up, ev.Down = "allow", early+upN, downN
	p.log(ev)
}

type closeWriter interface{ CloseWrite() error }

// copyBoth copies a→b and b→a until both directions end (pump.go),
// passing each end's EOF on as a half-close, and returns the bytes each
// way. Once a (the client) has ended, b is read on only while it sends:
// silent for drain, it is closed, so a server that neither answers nor
// closes holds no connection after its client gave up.
func copyBoth(a, b net.Conn, drain time.Duration) (ab, ba int64) {
	src := &drainReader{Conn: b, idle: drain}
	done := make(chan int64, 1)
	go func() {
		n, err := pump(b, a)
		if err == nil {
			src.arm()
		}
		halfClose(b, a, err)
		done <- n
	}()
	ba, err := pump(a, src)
	halfClose(a, b, err)
	ab = <-done
	return ab, ba
}

// drainReader reads its conn; once armed, each read must come within
// idle, or fails with the conn's timeout.
type drainReader struct {
	net.Conn
	idle  time.Duration
	armed atomic.Bool
}

func (d *drainReader) arm() {
	d.armed.Store(true)
	d.Conn.SetReadDeadline(time.Now().Add(d.idle))
}

func (d *drainReader) Read(b []byte) (int, error) {
	if d.armed.Load() {
		d.Conn.SetReadDeadline(time.Now().Add(d.idle))
	}
	return d.Conn.Read(b)
}

// halfClose ends writes to dst after its source src ended cleanly;
// after an error, or where dst can't half-close, both are closed so the
// other copy ends too.
func halfClose(dst, src net.Conn, err error) {
	if cw, ok := dst.(closeWriter); ok && err == nil && cw.CloseWrite() == nil {
		return
	}
	dst.Close()
	src.Close()
}
