package bucket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/internal/refusal"
)

// ErrEndpointReach is the rule every endpoint refused at a push or pull
// matches (errors.Is): its name resolves to this machine or its
// network, or cannot be resolved or checked now.
var ErrEndpointReach = refusal.Sentinel("bucket-endpoint-reach", "refused endpoint address")

// Resolver looks a name up; *net.Resolver is one. Agent.Resolver lets a
// test give names of its own (a DNS server on loopback), never an
// address off the machine.
type Resolver = netbroker.Resolver

// route is how one rclone child reaches one bucket's endpoint: the one
// TCP port landlock lets it connect to and, for every endpoint but a
// loopback address the owner named, the loopback CONNECT proxy it is
// told of (HTTPS_PROXY, HTTP_PROXY), which dials only the addresses
// checked for the endpoint's exact host and port.
type route struct {
	port  uint16 // the TCP port rclone may connect to
	proxy string // http://127.0.0.1:<port>, or "" when rclone connects itself

	p       *netbroker.Proxy
	own     *netclass.OwnWatch // this machine's addresses, for the proxy's checks
	served  chan struct{}
	mu      sync.Mutex
	refused []string // each refusal of the proxy's, with its reason
}

// openRoute checks where e's endpoint leads and readies the rclone
// child's way there. An endpoint that is a loopback address (only ever
// the owner's: `lnk agent bucket add … --s3 http://127.0.0.1:PORT`, and
// a receive leaves such a bucket out) is reached directly on its port:
// no name is looked up, and Go's HTTP client never sends a loopback
// address through a proxy. Any other endpoint's host is resolved once
// here and every address judged by internal/netclass (this machine's own
// addresses known): one that is not a public address refuses the
// endpoint whole, and so does a name that does not resolve. The
// addresses checked are then the only ones the proxy dials, for exactly
// the endpoint's host and port; rclone may connect to the proxy alone.
// The caller closes the route when the child has ended.
func (a *Agent) openRoute(ctx context.Context, e *entry) (*route, error) {
	u, err := url.Parse(e.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("bucket %s's endpoint: %w", e.Name, err)
	}
	h, err := netclass.ParseHost(u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("bucket %s's endpoint host: %w", e.Name, err)
	}
	port := endpointPort(e.Endpoint)
	// This machine's loopback itself (127.0.0.0/8, ::1, IPv4-mapped):
	// not an IPv6 form that only carries a loopback address (NAT64,
	// 6to4), which would leave the machine and which Go's client would
	// send through a proxy; that one is judged below, and refused.
	if h.IsAddr() && netclass.Classify(h.Addr) == netclass.Loopback && h.Addr.Unmap().IsLoopback() {
		return &route{port: port}, nil
	}
	private, err := a.isPrivateHost(e)
	if err != nil {
		return nil, a.refuseReach(e, h, "cannot be checked: the owner's --private-host marks: "+firstLine(err.Error()))
	}
	own, err := netclass.WatchOwnAddrs()
	if err != nil {
		return nil, a.refuseReach(e, h, "cannot be checked: "+err.Error())
	}
	addrs, err := a.checkAddrs(ctx, e, h, own, private)
	if err != nil {
		own.Close()
		return nil, err
	}
	r := &route{served: make(chan struct{})}
	// One plain TCP endpoint, the internet off: the proxy tunnels to
	// exactly the endpoint's host and port, no other host on any port
	// (with the internet on and no hosts, any host would be granted).
	// A --private-host bucket's endpoint is that one host and port too,
	// its answers allowed on the local network as checked here.
	g := &netbroker.Grants{AgentName: a.Name}
	if !private {
		g.Internet.TCP = []string{h.HostPort(port)}
	}
	rules, err := netbroker.RulesFrom(g)
	if err != nil {
		own.Close()
		return nil, fmt.Errorf("bucket %s's proxy: %w", e.Name, err)
	}
	if private {
		rules.AddLANEndpoint(h, port)
	}
	p, err := netbroker.New(netbroker.Config{Rules: rules, Resolver: pinned{name: h, addrs: addrs}, Own: own, Log: r.log})
	if err != nil {
		own.Close()
		return nil, fmt.Errorf("bucket %s's proxy: %w", e.Name, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		own.Close()
		return nil, fmt.Errorf("bucket %s's proxy: %w", e.Name, err)
	}
	r.p, r.own = p, own
	r.port = uint16(ln.Addr().(*net.TCPAddr).Port)
	r.proxy = "http://" + ln.Addr().String()
	go func() {
		defer close(r.served)
		p.Serve(ln)
	}()
	return r, nil
}

// checkAddrs resolves h once (an address is itself) and judges every
// answer by netclass's one routine ([netclass.Resolve], the proxy's and
// Link Web's too): all public and none of this machine's, or a refusal.
// With private (the owner's --private-host mark), an answer on the
// owner's own network (private, CGNAT, link-local) is allowed too;
// never loopback, this machine's own, metadata or the rest.
func (a *Agent) checkAddrs(ctx context.Context, e *entry, h netclass.Host, own netclass.OwnSet, private bool) ([]netip.Addr, error) {
	addrs, err := netclass.Resolve(ctx, a.Resolver, own, h, func(ad netip.Addr, cl netclass.Class) error {
		if cl == netclass.Public || private && localNetwork(cl) {
			return nil
		}
		what := "resolves to " + cl.Article() + " " + cl.String() + " (" + ad.String() + ")"
		if h.IsAddr() {
			what = "is " + cl.Article() + " " + cl.String()
		}
		if localNetwork(cl) {
			return a.refusePrivate(e, h, what+", which is this machine's network: a bucket's endpoint is reached only on the internet unless the owner added it --private-host")
		}
		return a.refuseReach(e, h, what+", which is this machine or its network: a bucket's endpoint is reached only on the internet")
	})
	var unresolved *netclass.UnresolvedError
	var unchecked *netclass.UncheckedError
	switch {
	case errors.As(err, &unresolved):
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		why := "does not resolve"
		if unresolved.Err != nil {
			why += " (" + firstLine(unresolved.Err.Error()) + ")"
		}
		return nil, a.refuseReach(e, h, why+": what it would reach cannot be checked")
	case errors.As(err, &unchecked):
		return nil, a.refuseReach(e, h, "cannot be checked: "+firstLine(unchecked.Err.Error()))
	case err != nil:
		return nil, err
	}
	return addrs, nil
}

// refuseReach is the refusal of e's endpoint host h, saying why.
func (a *Agent) refuseReach(e *entry, h netclass.Host, why string) error {
	return &refusal.Refusal{
		Reason: fmt.Sprintf("bucket %s's endpoint %s %s", e.Name, h, why),
		Rule:   "bucket-endpoint-reach",
		Hint:   "lnk agent bucket remove " + a.Name + " " + e.Name + ", then lnk agent bucket add " + a.Name + " " + e.Name + " --s3 https://PUBLIC-HOST --bucket B (for a store on this machine: --s3 http://127.0.0.1:PORT)",
		Err:    ErrEndpointReach,
	}
}

// localNetwork reports the classes an owner's --private-host bucket
// may resolve to: those a sandbox's [lan] host reaches.
func localNetwork(cl netclass.Class) bool {
	return cl == netclass.Private || cl == netclass.CGNAT || cl == netclass.LinkLocal
}

// refusePrivate is the refusal of e's endpoint host h on the owner's
// network, its hint the command that allows it.
func (a *Agent) refusePrivate(e *entry, h netclass.Host, why string) error {
	r := a.refuseReach(e, h, why).(*refusal.Refusal)
	r.Hint = "lnk agent bucket remove " + a.Name + " " + e.Name + ", then lnk agent bucket add " + a.Name + " " + e.Name + " --s3 " + e.Endpoint + " --bucket " + e.S3Bucket + " --private-host (the owner's own store on this network; a received bucket is never so)"
	return r
}

// env is the child's proxy variables: none when rclone connects itself.
func (r *route) env() []string {
	if r.proxy == "" {
		return nil
	}
	return []string{"HTTPS_PROXY=" + r.proxy, "HTTP_PROXY=" + r.proxy}
}

// log keeps each refusal of the proxy's, once, with its reason.
func (r *route) log(ev netbroker.Event) {
	if ev.Decision != "refuse" {
		return
	}
	line := fmt.Sprintf("%s %s: %s", ev.Kind, net.JoinHostPort(ev.Host, strconv.Itoa(int(ev.Port))), ev.Reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	// rclone retries: the same refusal is named once.
	if !slices.Contains(r.refused, line) {
		r.refused = append(r.refused, line)
	}
}

// errRefused is the proxy's refusals as one error, or nil when there
// was none. A child that asked the proxy for anything but its endpoint
// fails its call whatever it made of the answer.
func (r *route) errRefused(e *entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.refused) == 0 {
		return nil
	}
	return &refusal.Refusal{
		Reason: fmt.Sprintf("bucket %s: rclone asked for what its endpoint is not, and Link's proxy refused it: %s", e.Name, strings.Join(r.refused, "; ")),
		Rule:   "bucket-endpoint-reach",
		Err:    ErrEndpointReach,
	}
}

// Close stops the proxy, if any, waits for it and its connections, then
// closes the watch they checked with.
func (r *route) Close() {
	if r.p == nil {
		return
	}
	r.p.Close()
	<-r.served
	r.own.Close()
}

// pinned answers the proxy's lookup of the endpoint's name with the
// addresses checked before the child started, and refuses any other
// name: the proxy never looks a name up again (no DNS rebinding).
type pinned struct {
	name  netclass.Host
	addrs []netip.Addr
}

func (p pinned) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	h, err := netclass.ParseHost(host)
	if err != nil || h.IsAddr() || h.Name != p.name.Name || p.name.IsAddr() {
		return nil, errors.New("not the bucket's endpoint")
	}
	return p.addrs, nil
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
