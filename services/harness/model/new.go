package model

import (
	"net/netip"
	"net/url"
	"strings"
)

// New makes the client of e's wire format. It refuses a format it
// doesn't speak; a base URL that is not http:// or https://, or that
// carries credentials, a query or a fragment; and a key sent over
// http:// anywhere but this machine's loopback (where the sandbox's
// proxy and a local model are), which would cross a network in clear.
func New(e Endpoint) (Client, error) {
	if e.Format != FormatOpenAI && e.Format != FormatAnthropic {
		return nil, &Error{Kind: KindBadRequest, Message: "a model's format is " + FormatOpenAI + " or " + FormatAnthropic + ", not " + quoteLine(e.Format)}
	}
	u, err := url.Parse(e.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, &Error{Kind: KindBadRequest, Message: "a model's base URL is http:// or https:// and a host"}
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, &Error{Kind: KindBadRequest, Message: "a model's base URL carries no credentials, query or fragment (the key goes in its own setting)"}
	}
	if e.Key != "" && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, &Error{Kind: KindBadRequest, Message: "a model's key goes over http:// only to this machine's loopback (the sandbox's proxy, a local model); " + quoteLine(u.Host) + " needs https://"}
	}
	path := strings.TrimSuffix(u.Path, "/")
	switch e.Format {
	case FormatAnthropic:
		// Anthropic's base is the host: https://api.anthropic.com, or a
		// route's root; "/v1" is added unless the base ends with it.
		if !strings.HasSuffix(path, "/v1") {
			path += "/v1"
		}
		path += "/messages"
	default:
		// An OpenAI-compatible base ends with its version: …/v1.
		path += "/chat/completions"
	}
	u.Path, u.RawPath = path, ""
	hc := e.HTTPClient
	if hc == nil {
		if hc, err = HTTPClient(); err != nil {
			return nil, err
		}
	} else {
		// A client given is used as it is but for redirects, which are
		// never followed, whoever made it.
		own := *hc
		own.CheckRedirect = noRedirect
		hc = &own
	}
	return &client{e: e, url: u.String(), hc: hc, clean: cleaner{key: e.Key}, clock: realClock}, nil
}

// isLoopback says whether host (a URL's, without brackets) is this
// machine's loopback: localhost, 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback() && a.Zone() == ""
}

// quoteLine is untrusted words quoted for an error's line.
func quoteLine(s string) string {
	return cleaner{}.clean(`"` + s + `"`)
}
