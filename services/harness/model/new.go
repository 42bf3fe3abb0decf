package model

import (
	"net/url"
	"strings"
)

// New makes the client of e's wire format. It refuses a format it
// doesn't speak and a base URL that is not http:// or https://, or that
// carries credentials, a query or a fragment.
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
	}
	return &client{e: e, url: u.String(), hc: hc, clean: cleaner{key: e.Key}, clock: realClock}, nil
}

// quoteLine is untrusted words quoted for an error's line.
func quoteLine(s string) string {
	return cleaner{}.clean(`"` + s + `"`)
}
