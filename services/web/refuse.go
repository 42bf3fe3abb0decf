package web

import (
	"fmt"

	"lnk.dev/lnk/internal/refusal"
)

// Refusal is Link's one refusal shape: a call Link Web will not make, or
// a page it will not give, with one lowercase line saying why and, where
// one exists, the lnk command that would allow it.
type Refusal = refusal.Refusal

func refusef(format string, a ...any) *Refusal {
	return refusal.New(fmt.Sprintf(format, a...))
}

// refusalText is what the model is told: the reason, then the hint.
func refusalText(r *Refusal) string {
	if r.Hint == "" {
		return "lnk-web: refused: " + r.Reason
	}
	return "lnk-web: refused: " + r.Reason + "\nhint: " + r.Hint
}

// asRefusal finds the Refusal in err (the http client wraps what the
// transport or the redirect check returned).
func asRefusal(err error) (*Refusal, bool) { return refusal.Of(err) }
