package netbroker

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/sealedgrant"
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
		if err := sealedgrant.CheckHeader(g); err != nil {
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
		return &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: fmt.Sprintf("%s answered with a Content-Encoding though asked for identity: a sealed secret's answer is checked for the value, which needs it uncompressed", h)}}
	}
	if resp.StatusCode == http.StatusPartialContent {
		return &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: fmt.Sprintf("%s answered a part (206) though no Range was sent: a sealed secret's answer is checked whole", h)}}
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

// misplaced refuses a request that puts the placeholder where the value
// never goes (another header, the query) and in none of the headers the
// grant names: it could not authenticate, and the owner is told which
// header to name. A placeholder beside one in a granted header, or in a
// body, goes as it is.
func misplaced(in http.Header, rawQuery string, grant []string, placeholder, name, host string) *Refusal {
	var other []string
	for k, vs := range in {
		for _, v := range vs {
			if !strings.Contains(v, placeholder) {
				continue
			}
			if isOneOf(k, grant) {
				return nil
			}
			other = append(other, k)
		}
	}
	slices.Sort(other)
	where, header := "the query", "HEADER"
	if len(other) > 0 {
		where, header = other[0], other[0]
	} else if !strings.Contains(rawQuery, placeholder) {
		return nil
	}
	return &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: fmt.Sprintf("sealed secret %s goes only in %s, where its grant says %s authenticates, and this request puts its placeholder in %s instead: a sealed value never goes in a query, a body, a path or another header",
		name, strings.Join(grant, ", "), host, where), Hint: fmt.Sprintf("lnk secret remove %s, then lnk secret create %s --internet-host %s --header %s", name, name, host, header)}}
}
