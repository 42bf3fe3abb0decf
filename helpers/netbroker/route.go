package netbroker

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// route hands an origin-form request under /_link/ to Config.Routes,
// replaying the bytes already read. Each route connection carries one
// request; its handler bounds its own body.
func (p *Proxy) route(c net.Conn, raw []byte) {
	if p.cfg.Routes == nil {
		p.refuse(c, Event{Kind: "route"}, &Refusal{Status: 404, Kind: KindRoute, Reason: "no route of Link's at this path"})
		return
	}
	p.log(Event{Kind: "route", Decision: "allow", Reason: "handed to Link's own routes"})
	pc := &prefixConn{Conn: c, prefix: raw, done: make(chan struct{})}
	srv := &http.Server{
		Handler:           p.cfg.Routes,
		ReadHeaderTimeout: p.cfg.HeaderTimeout,
		MaxHeaderBytes:    p.cfg.MaxHeaderBytes,
		IdleTimeout:       time.Second,
		ErrorLog:          nil,
	}
	srv.SetKeepAlivesEnabled(false)
	srv.Serve(&oneConnListener{c: pc})
}

// isToolRoute reports /_link/s/<secret>/mcp/<name>.
func isToolRoute(path string) bool {
	rest, ok := strings.CutPrefix(path, RoutePrefix+"s/")
	if !ok {
		return false
	}
	_, rest, ok = strings.Cut(rest, "/")
	return ok && strings.HasPrefix(rest, "mcp/")
}

// toolRoute relays one request to the tool bridge, which checks the
// route's secret: the bytes read so far, then both ways until the end.
// A body declared over 8 MB is refused here (413); the bridge bounds a
// chunked one itself.
func (p *Proxy) toolRoute(c net.Conn, req *http.Request, raw []byte) {
	ev := Event{Kind: "route", Host: "tool-bridge"}
	if p.cfg.ToolBridge == nil {
		p.refuse(c, ev, &Refusal{Status: 404, Kind: KindRoute, Reason: "this sandbox has no tool bridge"})
		return
	}
	if req.ContentLength > MaxRouteBody {
		p.refuse(c, ev, &Refusal{Status: 413, Kind: KindTooLarge, Reason: fmt.Sprintf("a tool call's body is at most %d bytes", MaxRouteBody)})
		return
	}
	up, err := p.cfg.ToolBridge()
	if err != nil {
		p.refuse(c, ev, &Refusal{Status: 502, Kind: KindUpstream, Reason: "the tool bridge did not answer"})
		return
	}
	if !p.track(nil, up) {
		up.Close()
		return
	}
	defer p.untrack(nil, up)
	defer up.Close()
	if _, err := up.Write(raw); err != nil {
		return
	}
	var upN, downN int64
	if wholeRequest(req, raw) {
		// Nothing more of the client's is needed: its answer is relayed
		// on this goroutine alone, and the connection closed after it.
		downN, _ = copyRoute(c, up)
	} else {
		upN, downN = spliceRoute(c, up)
	}
	ev.Decision, ev.Up, ev.Down = "allow", int64(len(raw))+upN, downN
	p.log(ev)
}

// wholeRequest reports whether raw, the bytes read of the connection so
// far, hold req's headers and all of its body as its Content-Length
// gives it (most tool calls: one small message, read in one go). A
// chunked body, or one still to come, is relayed both ways.
func wholeRequest(req *http.Request, raw []byte) bool {
	if req.ContentLength < 0 || len(req.TransferEncoding) > 0 {
		return false
	}
	end := headerEnd(raw)
	return end >= 0 && int64(len(raw)-end) >= req.ContentLength
}

// headerEnd is where the headers http.ReadRequest read of raw end: after
// the first empty line (CRLF or a bare LF, as it reads lines), or -1.
func headerEnd(raw []byte) int {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(raw) && raw[i] == '\n':
			return i + 1
		case i+1 < len(raw) && raw[i] == '\r' && raw[i+1] == '\n':
			return i + 2
		}
	}
	return -1
}

// spliceRoute is splice for a tool call: a small message each way, many
// of them, so its buffers are kept for the next call rather than made
// (32 KiB each way) and cleared for each.
func spliceRoute(a, b net.Conn) (ab, ba int64) {
	done := make(chan int64, 1)
	go func() {
		n, err := copyRoute(b, a)
		halfClose(b, a, err)
		done <- n
	}()
	ba, err := copyRoute(a, b)
	halfClose(a, b, err)
	ab = <-done
	return ab, ba
}

var routeBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

func copyRoute(dst, src net.Conn) (int64, error) {
	buf := routeBufs.Get().(*[]byte)
	defer routeBufs.Put(buf)
	return io.CopyBuffer(dst, src, *buf)
}
