package web

import (
	"context"
	"io"
	"net/netip"
	"net/url"
	"time"

	"lnk.dev/lnk/internal/netclass"
)

// The spec's limits (security.txt "Web").
const (
	MaxPage      = 5 << 20          // a page is read up to 5 MB
	CallTimeout  = 30 * time.Second // a page, its redirects and body together, or a search
	MaxRedirects = 10               // each checked as the first URL
	MaxCalls     = 16               // calls at once; one past them is not read until one is answered
	MaxConverts  = 2                // pages made markdown at a time
	MaxDepth     = 512              // a page nested deeper comes as plain text
)

// Resolver looks names up; *net.Resolver is one. Tests give the tool one
// of their own, so nothing is looked up off the machine.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is one tool's settings: what cmd/lnk-web reads from its flags
// and environment. The zero value of a limit is the spec's.
type Config struct {
	// PrivateHosts are hosts (--private-host) fetched wherever they
	// resolve: a name or an address, as [netclass.ParseHost] reads it.
	PrivateHosts []string
	// Resolver looks names up once a hop; nil is the system's.
	Resolver Resolver
	// Own knows this machine's own addresses (netclass.WatchOwnAddrs).
	// Nil refuses every address that could be one.
	Own netclass.OwnSet
	// Proxy is HTTPS_PROXY and its kin from the tool's environment
	// (http.ProxyFromEnvironment): nil, or one that answers nil, dials
	// the checked addresses itself.
	Proxy func(*url.URL) (*url.URL, error)

	// BraveKey and TavilyKey are the search APIs' keys, from the tool's
	// environment (BRAVE_API_KEY, TAVILY_API_KEY); Brave's is used when
	// both are set. Never logged, never in an answer.
	BraveKey, TavilyKey string
	// BraveURL and TavilyURL are the APIs' endpoints; empty is theirs
	// (tests point them at a host of their own).
	BraveURL, TavilyURL string

	// Timeout bounds a call (0: CallTimeout; tests shorten it).
	Timeout time.Duration
	// Log takes one line for each refusal and failure, with its reason.
	Log io.Writer
}

const (
	braveEndpoint  = "https://api.search.brave.com/res/v1/web/search"
	tavilyEndpoint = "https://api.tavily.com/search"
)

func (c *Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return CallTimeout
}
