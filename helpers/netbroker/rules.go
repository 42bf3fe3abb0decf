package netbroker

import (
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/internal/refusal"
)

// Pattern is a host rule: an exact host, or "*." and a domain of at least
// two labels, which matches every name below that domain and never the
// domain itself or a look-alike (*.example.com does not match
// example.com or evil-example.com).
type Pattern struct {
	exact  Host
	suffix string // ".example.com" for a wildcard
}

// ParsePattern parses a host rule. Anything broader than *.x.y, a "*"
// anywhere but a leading "*.", and any host [ParseHost] refuses are
// refused.
func ParsePattern(s string) (Pattern, error) {
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		h, err := ParseHost(rest)
		if err != nil {
			return Pattern{}, err
		}
		if h.IsAddr() {
			return Pattern{}, fmt.Errorf("wildcard %q names an address, not a domain", s)
		}
		if strings.Count(h.Name, ".") < 1 {
			return Pattern{}, fmt.Errorf("wildcard %q is broader than *.domain.tld", s)
		}
		return Pattern{suffix: "." + h.Name}, nil
	}
	if strings.Contains(s, "*") {
		return Pattern{}, fmt.Errorf("host rule %q: only a single leading \"*.\" is a wildcard", s)
	}
	h, err := ParseHost(s)
	if err != nil {
		return Pattern{}, err
	}
	return Pattern{exact: h}, nil
}

// Match reports whether the pattern holds h.
func (p Pattern) Match(h Host) bool {
	if p.suffix != "" {
		return !h.IsAddr() && len(h.Name) > len(p.suffix) && strings.HasSuffix(h.Name, p.suffix)
	}
	if h.IsAddr() {
		return p.exact.IsAddr() && p.exact.Addr == h.Addr.WithZone("")
	}
	return p.exact.Name == h.Name
}

func (p Pattern) String() string {
	if p.suffix != "" {
		return "*" + p.suffix
	}
	return p.exact.String()
}

type endpoint struct {
	host Pattern
	port uint16
	lan  bool // may reach a local-network address ([Rules.AddLANEndpoint])
}

// Rules are the network grants of one sandbox, compiled for the proxy.
// The zero value refuses everything.
type Rules struct {
	// Agent names the agent in hints (lnk agent allow <Agent> …).
	Agent     string
	internet  bool
	anyHost   bool
	hosts     []Pattern
	tcp       []endpoint
	lan       []Pattern
	localhost map[uint16]bool
	// PerMinute caps requests and tunnels a minute (0: no cap).
	PerMinute int
}

// WebPorts are the ports an [internet] host is reached on; any other
// needs a tcp endpoint.
var WebPorts = map[uint16]bool{80: true, 443: true}

// noAgent is Rules.Agent for grants that name no agent.
const noAgent = "<agent>"

// RulesFrom compiles c's network grants. [network] mode "host" has no
// proxy at all, so it is refused here: the caller must not start one.
func RulesFrom(c *Grants) (*Rules, error) {
	if c.NetworkMode == "host" {
		return nil, fmt.Errorf("[network] mode = \"host\" runs without Link's proxy")
	}
	if c.AllLocalhost {
		return nil, fmt.Errorf("[localhost] ports = \"*\" only with [network] mode = \"host\"")
	}
	r := &Rules{Agent: c.AgentName, internet: c.Internet.On, PerMinute: c.Internet.PerMinute, localhost: map[uint16]bool{}}
	if r.Agent == "" {
		r.Agent = noAgent
	}
	r.anyHost = c.Internet.On && len(c.Internet.Hosts) == 0
	for _, s := range c.Internet.Hosts {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("[internet] hosts: %w", err)
		}
		r.hosts = append(r.hosts, p)
	}
	for _, s := range c.Internet.TCP {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return nil, fmt.Errorf("[internet] tcp %q: want host:port", s)
		}
		p, err := ParsePattern(strings.Trim(s[:i], "[]"))
		if err != nil {
			return nil, fmt.Errorf("[internet] tcp: %w", err)
		}
		port, err := ParsePort(s[i+1:])
		if err != nil {
			return nil, fmt.Errorf("[internet] tcp %q: %w", s, err)
		}
		r.tcp = append(r.tcp, endpoint{host: p, port: port})
	}
	for _, s := range c.LANHosts {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("[lan] hosts: %w", err)
		}
		r.lan = append(r.lan, p)
	}
	for _, port := range c.LocalhostPorts {
		r.localhost[port] = true
	}
	return r, nil
}

// AddLANEndpoint grants exactly h on port, and lets its answers be
// local-network addresses (private, CGNAT, link-local: what a [lan]
// host reaches), never loopback, this machine's own or metadata. No
// sandbox's grants give it: only an owner's bucket marked
// --private-host (services/bucket), whose proxy tunnels to that one
// host and port. A [lan] host, by contrast, is granted on every port.
func (r *Rules) AddLANEndpoint(h Host, port uint16) {
	r.tcp = append(r.tcp, endpoint{host: Pattern{exact: h}, port: port, lan: true})
}

func matchAny(ps []Pattern, h Host) bool {
	for _, p := range ps {
		if p.Match(h) {
			return true
		}
	}
	return false
}

// isLocalhostName reports names that mean this machine.
func isLocalhostName(h Host) bool { return netclass.IsLocalhostName(h) }

// allowHost decides by name (or literal address) and port, before any
// lookup: is the host granted at all on this port? It returns whether
// the host is a [lan] host, which the address check then lets reach a
// private address.
func (r *Rules) allowHost(h Host, port uint16) (lan bool, err error) {
	if isLocalhostName(h) {
		if r.localhost[port] {
			return false, nil
		}
		return false, r.refuseLocalhost(port)
	}
	if matchAny(r.lan, h) {
		return true, nil
	}
	for _, e := range r.tcp {
		if e.port == port && e.host.Match(h) {
			return e.lan, nil
		}
	}
	if h.IsAddr() && Classify(h.Addr) == Loopback {
		if r.localhost[port] {
			return false, nil
		}
		return false, r.refuseLocalhost(port)
	}
	if !r.internet || !(r.anyHost || matchAny(r.hosts, h)) {
		if h.IsAddr() && Classify(h.Addr) != Public {
			return false, r.refuseAddress(h, port, Classify(h.Addr))
		}
		return false, &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindHost, Reason: fmt.Sprintf("host %s is not in this sandbox's [internet] hosts", h), Hint: fmt.Sprintf("lnk agent allow %s --internet-host %s", r.Agent, h)}}
	}
	if !WebPorts[port] {
		return false, &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindPort, Reason: fmt.Sprintf("port %d of %s is not granted ([internet] hosts reach ports 80 and 443)", port, h), Hint: fmt.Sprintf("lnk agent allow %s --tcp %s", r.Agent, h.HostPort(port))}}
	}
	return false, nil
}

func (r *Rules) refuseLocalhost(port uint16) error {
	return &Refusal{Status: 403, Class: Loopback, Refusal: refusal.Refusal{Rule: KindAddress, Reason: fmt.Sprintf("loopback port %d is not in this sandbox's [localhost] ports", port), Hint: fmt.Sprintf("lnk agent allow %s --port %d", r.Agent, port)}}
}

// refuseAddress is the refusal for an address of class c met while
// reaching h.
func (r *Rules) refuseAddress(h Host, port uint16, c Class) error {
	ref := &Refusal{Status: 403, Class: c, Refusal: refusal.Refusal{Rule: KindAddress, Reason: fmt.Sprintf("%s resolves to %s %s, which the proxy never dials without a grant", h, c.Article(), c)}}
	if h.IsAddr() {
		ref.Reason = fmt.Sprintf("%s is %s %s, which the proxy never dials without a grant", h, c.Article(), c)
	}
	switch c {
	case Loopback:
		ref.Hint = fmt.Sprintf("lnk agent allow %s --port %d", r.Agent, port)
	case Private, CGNAT, LinkLocal:
		ref.Hint = fmt.Sprintf("lnk agent allow %s --lan-host %s", r.Agent, h)
	case Metadata, Own:
		ref.Reason = fmt.Sprintf("%s is %s %s: never reachable from a sandbox", h, c.Article(), c)
		if !h.IsAddr() {
			ref.Reason = fmt.Sprintf("%s resolves to %s %s: never reachable from a sandbox", h, c.Article(), c)
		}
	}
	return ref
}

// allowAddr decides one checked address of a host that passed allowHost.
func (r *Rules) allowAddr(h Host, port uint16, c Class, lan bool) error {
	switch c {
	case Public:
		return nil
	case Loopback:
		if r.localhost[port] {
			return nil
		}
	case Private, CGNAT, LinkLocal:
		if lan {
			return nil
		}
	}
	return r.refuseAddress(h, port, c)
}
