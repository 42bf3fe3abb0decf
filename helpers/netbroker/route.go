package netbroker

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/refusal"
)

// route hands an origin-form request under /_link/ to Config.Routes,
// replaying the bytes already read. Each route connection carries one
// request; its handler bounds its own body.
func (p *Proxy) route(c net.Conn, raw []byte) {
	if p.cfg.Routes == nil {
		p.refuse(c, Event{Kind: "route"}, &Refusal{Status: 404, Refusal: refusal.Refusal{Rule: KindRoute, Reason: "no route of Link's at this path"}})
		return
	}
	p.log(Event{Kind: "route", Decision: "allow", Reason: "handed to Link's own routes"})
	pc := &prefixConn{Conn: connpass.WithHead(c, raw), done: make(chan struct{})}
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

// toolRoute passes the connection of one request to the tool bridge,
// which checks the route's secret and answers the client itself: the
// bytes read so far go with it (internal/connpass), and nothing of the
// call passes through the proxy after. A body declared over 8 MB is
// refused here (413); the bridge bounds a chunked one itself.
func (p *Proxy) toolRoute(c net.Conn, req *http.Request, raw []byte) {
	ev := Event{Kind: "route", Host: "tool-bridge"}
	if p.cfg.ToolBridge == nil {
		p.refuse(c, ev, &Refusal{Status: 404, Refusal: refusal.Refusal{Rule: KindRoute, Reason: "this sandbox has no tool bridge"}})
		return
	}
	if req.ContentLength > MaxRouteBody {
		p.refuse(c, ev, &Refusal{Status: 413, Refusal: refusal.Refusal{Rule: KindTooLarge, Reason: fmt.Sprintf("a tool call's body is at most %d bytes", MaxRouteBody)}})
		return
	}
	if err := connpass.Send(p.cfg.ToolBridge, c, raw); err != nil {
		p.refuse(c, ev, &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: "the tool bridge did not take the request"}})
		return
	}
	ev.Decision, ev.Reason, ev.Up = "allow", "passed to the tool bridge", int64(len(raw))
	p.log(ev)
}
