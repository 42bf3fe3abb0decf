package netbroker

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"lnk.dev/lnk/helpers/keybroker/secrets"
)

// wholeHeaders are what a sealed route never passes on from the
// sandbox: they would have the host answer compressed (Accept-Encoding)
// or in pieces (Range, If-Range), where the value, reflected, is never
// written out whole for the scrub to see. The route asks for identity.
var wholeHeaders = []string{"Accept-Encoding", "Range", "If-Range"}

// sealedHeaders copies the sandbox's headers in to out, but a
// connection's own and wholeHeaders, with the placeholder replaced by
// the value in the headers the grant names alone; every other header
// goes as the sandbox sent it. out asks for an uncompressed answer.
func sealedHeaders(out, in http.Header, grant []string, placeholder, value string) {
	for k, vs := range in {
		if isHop(k) || isOneOf(k, wholeHeaders) {
			continue
		}
		auth := isOneOf(k, grant)
		for _, v := range vs {
			if auth {
				v = strings.ReplaceAll(v, placeholder, value)
			}
			out.Add(k, v)
		}
	}
	out.Set("Accept-Encoding", "identity")
}

// checkSealHeaders refuses a grant naming no header, or a name the
// secrets file would not take: what the keybroker handed is checked
// again here, where the value is added.
func checkSealHeaders(grant []string) error {
	if len(grant) == 0 {
		return errors.New("an empty list")
	}
	for _, g := range grant {
		if err := secrets.CheckHeader(g); err != nil {
			return err
		}
	}
	return nil
}

// wholeAnswer refuses an answer the scrub can't read whole: compressed
// though identity was asked for, or a part (206) though no Range was
// sent. Either could carry a reflected value in pieces or encoded.
func wholeAnswer(resp *http.Response, h Host) *Refusal {
	if ce := strings.TrimSpace(resp.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		return &Refusal{Status: 502, Kind: KindUpstream,
			Reason: fmt.Sprintf("%s answered with a Content-Encoding though asked for identity: a sealed secret's answer is checked for the value, which needs it uncompressed", h)}
	}
	if resp.StatusCode == http.StatusPartialContent {
		return &Refusal{Status: 502, Kind: KindUpstream,
			Reason: fmt.Sprintf("%s answered a part (206) though no Range was sent: a sealed secret's answer is checked whole", h)}
	}
	return nil
}

func isOneOf(k string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}
