package web

import (
	"crypto/tls"
	"fmt"
	"net"
)

// Web is one Link Web tool: its settings, and the limits its calls
// share.
type Web struct {
	cfg      Config
	resolver Resolver
	private  privateSet
	convert  chan struct{} // MaxConverts pages made markdown at a time
	// tlsConfig, where set (tests: their own CA), is the hops' TLS.
	tlsConfig *tls.Config
	// guard is the transport every call's hops go through: a connection
	// it keeps was dialled to an address checked for its host and port,
	// and each hop is checked again before it is sent.
	guard *guard
}

// New is a tool with cfg's settings. A --private-host that is no host
// is an error.
func New(cfg Config) (*Web, error) {
	p, err := newPrivateSet(cfg.PrivateHosts)
	if err != nil {
		return nil, err
	}
	w := &Web{cfg: cfg, resolver: cfg.Resolver, private: p, convert: make(chan struct{}, MaxConverts)}
	if w.resolver == nil {
		w.resolver = net.DefaultResolver
	}
	w.guard = w.newGuard()
	return w, nil
}

// SetTLS sets the hops' TLS settings (tests: a CA of their own), before
// any call.
func (w *Web) SetTLS(c *tls.Config) {
	w.tlsConfig = c
	w.guard = w.newGuard()
}

// logf writes one line to the log, if there is one.
func (w *Web) logf(format string, a ...any) {
	if w.cfg.Log != nil {
		fmt.Fprintf(w.cfg.Log, "lnk-web: "+format+"\n", a...)
	}
}
