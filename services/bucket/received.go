package bucket

import (
	"net/url"
	"strings"

	"lnk.dev/lnk/internal/netclass"
)

// NarrowReceived takes a received rclone.conf, already checked by
// CheckConf, less each bucket whose endpoint is this machine or its
// network rather than a store out on the internet: an address that
// internal/netclass does not call Public (loopback, private, link-local,
// carrier-grade NAT, metadata, …), "localhost" and any name under
// .localhost, and a name of one label (found through /etc/hosts or a
// search domain: this machine or its network). The sender chose those
// endpoints on its machine; here they would aim the agent's rclone, with
// the bucket's keys, at a service on the receiving machine. It returns
// the conf to write (data itself when nothing is left out; nil when
// every bucket is) and the buckets left out, with why. The caller clears
// the bytes.
func NarrowReceived(data []byte) (kept []byte, dropped []Dropped, err error) {
	c, err := parseConf(data)
	if err != nil {
		return nil, nil, err
	}
	defer c.destroy()
	var keep []*entry
	for _, e := range c.entries {
		if why := localEndpoint(e.Endpoint); why != "" {
			dropped = append(dropped, Dropped{Bucket: e.Bucket, Why: why})
			continue
		}
		keep = append(keep, e)
	}
	switch {
	case len(dropped) == 0:
		return data, nil, nil
	case len(keep) == 0:
		return nil, dropped, nil
	}
	c.entries = keep
	return c.encode(), dropped, nil
}

// Dropped is a received bucket left out, and why.
type Dropped struct {
	Bucket
	Why string
}

// localEndpoint says why an endpoint CheckEndpoint wrote reaches this
// machine or its network, or "" when it is a public address or a name
// of more than one label other than localhost's. A name's answer in the
// DNS is not looked up here: each push and pull judges it (route.go).
func localEndpoint(ep string) string {
	u, err := url.Parse(ep)
	if err != nil {
		return "its endpoint can't be read"
	}
	h, err := netclass.ParseHost(u.Hostname())
	if err != nil {
		return "its endpoint's host can't be read"
	}
	if h.IsAddr() {
		if cl := netclass.Classify(h.Addr); cl != netclass.Public {
			return "its endpoint is " + cl.Article() + " " + cl.String() + ", which here is this machine or its network"
		}
		return ""
	}
	name := h.Name // lowercase, no trailing dot
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return "its endpoint is localhost, which here is this machine"
	case !strings.Contains(name, "."):
		return "its endpoint is a name of one label, which here names this machine or its network"
	}
	return ""
}
