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
	return w, nil
}

// SetTLS sets the hops' TLS settings (tests: a CA of their own).
func (w *Web) SetTLS(c *tls.Config) { w.tlsConfig = c }

// logf writes one line to the log, if there is one.
func (w *Web) logf(format string, a ...any) {
	if w.cfg.Log != nil {
		fmt.Fprintf(w.cfg.Log, "lnk-web: "+format+"\n", a...)
	}
}
