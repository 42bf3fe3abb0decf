package model

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/internal/textsafe"
)

// maxMessage is the most of a provider's words an [Error] keeps.
const maxMessage = 512

// keyShaped is what a provider's key, or the masked echo of one, looks
// like in its error's words (OpenAI's "Incorrect API key provided:
// sk-proj-****abcd", a bearer token echoed): taken out whatever the key
// the endpoint holds, so a real key the proxy added is never repeated
// even where the proxy's own scrub did not see it.
var keyShaped = regexp.MustCompile(`(?i)\b(?:sk|rk|pk)-[a-z0-9_\-*.]{6,}|\bbearer\s+\S+|\b(?:key|token)[=:]\s*\S+`)

// cleaner makes a provider's words one clean line without the
// endpoint's key.
type cleaner struct{ key string }

// clean gives s as one printable line (internal/textsafe), with the
// key, anything shaped like a key, and the end past maxMessage taken
// out.
func (c cleaner) clean(s string) string {
	if c.key != "" {
		s = strings.ReplaceAll(s, c.key, "[key]")
	}
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
	s = textsafe.Line(s)
	s = keyShaped.ReplaceAllString(s, "[key]")
	if c.key != "" {
		// Removing controls can join a key split by them.
		s = strings.ReplaceAll(s, c.key, "[key]")
	}
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
