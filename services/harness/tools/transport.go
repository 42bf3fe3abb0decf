package tools

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

// MaxBody is the most of one HTTP answer a tool session reads: a tool
// answering more fails the call (said to the model), never filling the
// harness's memory.
const MaxBody = 16 << 20

// errTooLarge is a tool's HTTP answer past MaxBody.
var errTooLarge = errors.New("the tool's answer is past 16 MiB: refused")

// ProxyClient is the HTTP client tool sessions use: every request through
// $HTTP_PROXY (the sandbox's proxy, on its loopback) when it is set,
// loopback included, which Go's own ProxyFromEnvironment would send
// direct; with it unset outside a sandbox, straight to the URL. Inside
// Link's sandbox (LNK_SANDBOX=1) a missing $HTTP_PROXY is refused: the
// tools are reached through the proxy alone.
func ProxyClient(getenv func(string) string) (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	if getenv("LNK_SANDBOX") == "1" && getenv("HTTP_PROXY") == "" {
		return nil, errors.New("inside the sandbox $HTTP_PROXY names no proxy: the tools are reached through it alone")
	}
	if p := getenv("HTTP_PROXY"); p != "" {
		u, err := url.Parse(p)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("$HTTP_PROXY %q is not an http:// proxy", p)
		}
		t.Proxy = http.ProxyURL(u)
	}
	t.ResponseHeaderTimeout = 0
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: &capped{t}}, nil
}

// DefaultClient is ProxyClient of the process's environment.
func DefaultClient() (*http.Client, error) { return ProxyClient(os.Getenv) }

// capped caps every answer's body at MaxBody.
type capped struct{ rt http.RoundTripper }

func (c *capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: MaxBody}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an answer of exactly MaxBody from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
