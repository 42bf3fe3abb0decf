package tools

import (
	"errors"
	"net/url"
	"strings"
)

// scrub is err with the tool's URL taken out of its text: the proxy's
// tool route holds the bridge's secret in its path, and an error of the
// HTTP client or of the go-sdk quotes the URL it failed on. What scrub
// answers may go to the log and to the model; the URL never does.
func scrub(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	return errors.New(scrubText(err.Error(), rawURL))
}

// scrubText takes rawURL, its escaped forms, and each long segment of
// its path (a route's secret) out of s.
func scrubText(s, rawURL string) string {
	const gone = "[the tool's route]"
	if rawURL == "" {
		return s
	}
	s = strings.ReplaceAll(s, rawURL, gone)
	s = strings.ReplaceAll(s, url.QueryEscape(rawURL), gone)
	if u, err := url.Parse(rawURL); err == nil {
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= 8 {
				s = strings.ReplaceAll(s, seg, "[…]")
			}
		}
	}
	return s
}
