package netbroker

import (
	"net"
	"net/http"
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
