package netbroker

import (
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
	upN, downN := spliceRoute(c, up)
	ev.Decision, ev.Up, ev.Down = "allow", int64(len(raw))+upN, downN
	p.log(ev)
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
