package netbroker

import (
	"errors"
	"io"
	"net"
	"os"

	"lnk.dev/lnk/internal/connpass"
)

// The sandbox reaches its proxy on 127.0.0.1:<port> inside its own
// network: lnk-init listens there and hands the listener to the proxy
// once, on a channel only the two of them hold (internal/connpass,
// Options.Relay), with the lifeline's read end to hold. The proxy accepts
// the sandbox's connections on it itself and serves each as it serves a
// client of its socket: no process inside the sandbox relays them.

// serveRelay waits for the sandbox's listener on ch and serves it until
// Close, holding what came with it until then. A message that is not
// one is refused and logged; a channel closed with nothing handed (the
// sandbox failed before it listened) ends it quietly.
func (r *Running) serveRelay(ch *net.UnixConn) {
	defer close(r.relayDone)
	ln, held, err := connpass.NewReceiver(ch).ReceiveListener()
	ch.Close()
	var ref *connpass.Refusal
	switch {
	case errors.As(err, &ref):
		r.Proxy.log(Event{Kind: "relay", Decision: "refuse", Rule: KindMalformed, Reason: "the sandbox's listener: " + ref.Reason})
		return
	case err != nil:
		if !errors.Is(err, io.EOF) && !r.Proxy.isClosed() {
			r.Proxy.log(Event{Kind: "relay", Decision: "refuse", Rule: KindMalformed, Reason: "the sandbox's listener: " + err.Error()})
		}
		return
	}
	defer closeAll(held)
	r.Proxy.Serve(ln)
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
