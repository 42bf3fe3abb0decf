package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
)

// QuestionWait is how long a webhook's question waits for the owner.
const QuestionWait = 24 * time.Hour

// questionOf reports whether body is a JSON object {"question": "..."}
// alone: one key, a non-empty string.
func questionOf(r *http.Request, body []byte) (string, bool) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return "", false
	}
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	if d.Decode(&m) != nil || d.More() || len(m) != 1 {
		return "", false
	}
	raw, ok := m["question"]
	var q string
	if !ok || json.Unmarshal(raw, &q) != nil || q == "" {
		return "", false
	}
	return q, true
}

// sandboxOf is how a webhook's questions name who asks, in the owner's
// questions store.
func sandboxOf(h Hook) string { return "webhook:" + h.Name }

// ask puts q in the owner's questions (~/.lnk/questions), never to the
// agent, and answers 202 with its id. Its post's id is kept as any
// taken post's, so a repeat asks nothing twice.
func (l *Listener) ask(w http.ResponseWriter, h Hook, v webhookcheck.Verdict, q string, body []byte) {
	if shown, _ := askbroker.Clean(q); strings.TrimSpace(shown) == "" {
		// The owner would be asked nothing they can see.
		l.refuse(w, http.StatusBadRequest, "the question shows nothing once control, bidi and invisible characters are removed")
		return
	}
	key := seenKey(h, v, body)
	if err := l.seen.begin(key, l.now()); err != nil {
		l.refuseUnseen(w, err)
		return
	}
	id, err := l.putQuestion(h, q)
	if err != nil {
		l.seen.drop(key)
		l.refuse(w, http.StatusServiceUnavailable, "the question could not be kept: "+err.Error())
		return
	}
	if err := l.seen.take(key, l.now()); err != nil {
		l.refuse(w, http.StatusInternalServerError, "the question was kept, but "+SeenName+" could not be written: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	json.NewEncoder(w).Encode(map[string]string{"question": id})
}

func (l *Listener) putQuestion(h Hook, text string) (string, error) {
	s, err := askbroker.OpenStore(l.agent.Home)
	if err != nil {
		return "", err
	}
	defer s.Close()
	q := &askbroker.Question{What: "webhook question", Sandbox: sandboxOf(h), Agent: l.agent.Name, Call: text,
		Allow: "lnk ask answer ID yes|no; lnk agent webhook remove " + l.agent.Name + " " + h.Name + " stops its questions"}
	q.Clean()
	return s.Put(q, l.now().Add(QuestionWait))
}

// questionStatus answers a signed GET of /h/<id>/questions/<q>: Link's
// scheme over an empty body alone, its webhook-id the question's id (so
// the signed text, id.timestamp., names the question: a GET signed for
// one question is no GET of another within its 5 minutes), and only this
// webhook's questions.
func (l *Listener) questionStatus(w http.ResponseWriter, h Hook, v webhookcheck.Verdict, id string, body []byte) {
	switch {
	case v.Scheme != "link":
		l.refuse(w, http.StatusUnauthorized, "a question's status is asked in Link's scheme alone")
		return
	case len(body) != 0:
		l.refuse(w, http.StatusBadRequest, "a question's status is asked over an empty body")
		return
	case v.ID != id:
		l.refuse(w, http.StatusUnauthorized, "a question's status GET is signed with the question's id as its webhook-id")
		return
	}
	s, err := askbroker.OpenStore(l.agent.Home)
	if err != nil {
		l.refuse(w, http.StatusServiceUnavailable, "the questions can't be read: "+err.Error())
		return
	}
	defer s.Close()
	q, err := s.Read(id)
	if errors.Is(err, askbroker.ErrNoQuestion) || (err == nil && (q.Sandbox != sandboxOf(h) || q.Agent != l.agent.Name)) {
		l.refuse(w, http.StatusNotFound, "no such question of this webhook")
		return
	}
	if err != nil {
		l.refuse(w, http.StatusServiceUnavailable, "the question can't be read: "+err.Error())
		return
	}
	a, answered, err := s.ReadAnswer(id)
	if err != nil {
		l.refuse(w, http.StatusServiceUnavailable, "the answer can't be read: "+err.Error())
		return
	}
	status := map[string]any{"question": id, "status": "waiting"}
	switch {
	case answered && a.Allow:
		status["status"] = "allowed"
	case answered:
		status["status"] = "refused"
	case l.now().After(q.Deadline):
		status["status"] = "expired"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(status)
}
