package webhook

import (
	"net/http"

	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
)

// questionOf reports whether body is {"question": "..."} alone.
func questionOf(r *http.Request, body []byte) (string, bool) { return "", false }

// ask is step 3: not built yet.
func (l *Listener) ask(w http.ResponseWriter, h Hook, v webhookcheck.Verdict, q string) {
	l.refuse(w, http.StatusNotImplemented, "questions are not built yet")
}

// questionStatus is step 3: not built yet.
func (l *Listener) questionStatus(w http.ResponseWriter, h Hook, v webhookcheck.Verdict, q string) {
	l.refuse(w, http.StatusNotImplemented, "questions are not built yet")
}
