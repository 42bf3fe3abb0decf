package model

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// HTTPClient is the client a model is spoken to with when its
// [Endpoint] names none. Inside Link's sandbox (LNK_SANDBOX=1) every
// request goes to the sandbox's proxy, $HTTP_PROXY (http://, to
// 127.0.0.1 at the relay's port), loopback included: the sandbox's own
// loopback is not the machine's, and a local model, like a hosted one's
// sealed route, is reached through the proxy alone. Outside it, the
// usual proxy variables apply (http.ProxyFromEnvironment). It never
// follows a redirect (the 3xx is the answer, and an error), asks for no
// compression, and caps an answer's headers at 64 KiB; the body's own
// caps are the reader's ([MaxLine], [MaxAnswer]).
func HTTPClient() (*http.Client, error) {
	proxy := http.ProxyFromEnvironment
	if os.Getenv("LNK_SANDBOX") == "1" {
		p, err := sandboxProxy()
		if err != nil {
			return nil, err
		}
		proxy = p
	}
	t := &http.Transport{
		Proxy:                  proxy,
		DialContext:            (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true,
		MaxIdleConns:           4,
		IdleConnTimeout:        90 * time.Second,
	}
	return &http.Client{
		Transport:     t,
		CheckRedirect: noRedirect,
	}, nil
}

// sandboxProxy is the proxy the sandbox names in HTTP_PROXY (or
// http_proxy), for every request; none when it names none (a sandbox
// with its network as the host's). A proxy that is not http://host:port
// is refused rather than passed by.
func sandboxProxy() (func(*http.Request) (*url.URL, error), error) {
	v := os.Getenv("HTTP_PROXY")
	if v == "" {
		v = os.Getenv("http_proxy")
	}
	if v == "" {
		return nil, nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, &Error{Kind: KindBadRequest, Message: "HTTP_PROXY is not the sandbox's http:// proxy"}
	}
	return http.ProxyURL(u), nil
}

// noRedirect makes a client's redirect its answer, never followed.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
