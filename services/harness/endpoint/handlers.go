package endpoint

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/textsafe"
)

// ProofRequest and ProofAnswer are /link/proof's bodies.
type ProofRequest struct {
	Challenge string `json:"challenge"` // 32 bytes, hex
}
type ProofAnswer struct {
	Answer string `json:"answer"` // HMAC-SHA256, hex
}

// MessageRequest is /link/message's body.
type MessageRequest struct {
	Thread string `json:"thread"`
	Text   string `json:"text"`
	New    bool   `json:"new,omitempty"` // the owner's message starts the conversation
}

// Event is one line of a message's answer stream.
type Event struct {
	Text  string `json:"text,omitempty"`
	Done  bool   `json:"done,omitempty"`
	Seq   int64  `json:"seq,omitempty"`
	Error string `json:"error,omitempty"`
	// Queued says the message waits in its thread's inbox, on the disk:
	// taken, its turn to come after the one running (with Done).
	Queued bool `json:"queued,omitempty"`
	// Rule names the rule of a refusal the caller acts on
	// (conversation.RuleMissing, conversation.RuleExists), or "".
	Rule string `json:"rule,omitempty"`
}

// refuse answers status with why, and logs it once (never a key or a
// message's words: why is the endpoint's own).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	s.refuseRule(w, r, status, why, "")
}

// refuseRule is refuse naming the refusal's rule on the wire.
func (s *Server) refuseRule(w http.ResponseWriter, r *http.Request, status int, why, rule string) {
	s.logf("lnk-harness: refused %s %s (%d): %s", r.Method, r.URL.Path, status, why)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(Event{Error: why, Rule: rule})
}

// begin is what every request goes through first: POST, a key held at
// all (503 else), and the agents its headers name.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) []*agentState {
	if r.Method != http.MethodPost {
		s.refuse(w, r, http.StatusMethodNotAllowed, "only POST is taken")
		return nil
	}
	if !s.anyKey {
		s.refuse(w, r, http.StatusServiceUnavailable, "config.json names no endpoint key: every request is refused until lnk agent start writes one")
		return nil
	}
	as, ref := s.named(r)
	if ref != nil {
		s.refuse(w, r, ref.status, ref.Reason)
		return nil
	}
	return as
}

// decode reads exactly one JSON object of type T from the body, at most
// max bytes, with no unknown field.
func decode[T any](r *http.Request, max int64) (T, error) {
	var v T
	data, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return v, err
	}
	if int64(len(data)) > max {
		return v, errors.New("the body is larger than the endpoint takes")
	}
	seen, twice := map[string]bool{}, false
	if jsonscan.Members(bytes.TrimSpace(data), func(k string, _ jsonscan.Span) {
		twice = twice || seen[strings.ToLower(k)]
		seen[strings.ToLower(k)] = true
	}) != nil || twice {
		return v, errors.New("the body is not one JSON object with each field once")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return v, errors.New("the body is not the JSON object the endpoint takes")
	}
	if d.More() {
		return v, errors.New("the body holds more than one JSON value")
	}
	return v, nil
}

// proof answers the caller's challenge with the named agent's HMAC, so
// it knows this harness holds the key before sending it.
func (s *Server) proof(w http.ResponseWriter, r *http.Request) {
	as := s.begin(w, r)
	if as == nil {
		return
	}
	if len(as) > 1 {
		s.refuse(w, r, http.StatusConflict, "two owners' agents share this ID: name the owner ("+HeaderOwner+")")
		return
	}
	a := as[0]
	if a.Key == nil {
		s.refuse(w, r, http.StatusServiceUnavailable, "agent "+a.Name+" has no endpoint key: every request is refused")
		return
	}
	req, err := decode[ProofRequest](r, maxProofBody)
	var ch [proof.ChallengeSize]byte
	if err == nil {
		if b, herr := hex.DecodeString(req.Challenge); herr != nil || len(b) != proof.ChallengeSize {
			err = errors.New("the challenge is not 32 bytes in hex")
		} else {
			copy(ch[:], b)
		}
	}
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	ans := a.answer(ch)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ProofAnswer{Answer: hex.EncodeToString(ans[:])})
}

// bearer is the request's key, from Authorization: Bearer <hex>.
func bearer(r *http.Request) []byte {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil
	}
	b, err := hex.DecodeString(v)
	if err != nil {
		return nil
	}
	return b
}

// message checks the key, the sender, the thread and the text, waits for
// the thread's turn, and streams the answer as NDJSON.
func (s *Server) message(w http.ResponseWriter, r *http.Request) {
	as := s.begin(w, r)
	if as == nil {
		return
	}
	key := bearer(r)
	var a *agentState
	keyless := true
	for _, c := range as { // every candidate compared: the time says nothing of which matched
		keyless = keyless && c.Key == nil
		if c.keyIs(key) {
			a = c
		}
	}
	switch {
	case keyless:
		s.refuse(w, r, http.StatusServiceUnavailable, "agent "+as[0].Name+" has no endpoint key: every request is refused")
		return
	case a == nil:
		s.refuse(w, r, http.StatusUnauthorized, "the request doesn't carry the agent's key")
		return
	}
	from, hasFrom := "", false
	if vs, ok := r.Header[http.CanonicalHeaderKey(HeaderFrom)]; ok {
		hasFrom = true
		if len(vs) == 1 {
			from = vs[0]
		}
	}
	if hasFrom {
		if err := CheckFrom(from); err != nil || (a.Senders != nil && !a.Senders(from)) {
			s.refuse(w, r, http.StatusForbidden, HeaderFrom+" names no sender agent "+a.Name+" takes")
			return
		}
	}
	hops, err := hopsOf(r, hasFrom)
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	limit := int64(maxBody)
	if hasFrom {
		limit = maxOthersBody
	}
	req, err := decode[MessageRequest](r, limit)
	if err == nil {
		err = checkThread(req.Thread)
	}
	if err == nil {
		switch {
		case req.Text == "":
			err = errors.New("the message is empty")
		case from == "" && len(req.Text) > MaxOwnerMessage:
			err = errors.New("an owner's message is at most 16 KiB")
		case len(req.Text) > MaxOthersMessage:
			err = errors.New("a message from others is at most 1 MiB")
		case req.New && from != "":
			err = errors.New("only the owner's message starts a conversation with \"new\"")
		}
	}
	var sub *Subagent
	if err == nil {
		sub, err = subagentOf(r.Header, from, req.Thread)
	}
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if from == "" {
		if err := CheckOwnersThread(req.Thread); err != nil {
			s.refuse(w, r, http.StatusForbidden, err.Error())
			return
		}
	} else if why := conversation.NotOthers(from, req.Thread); why != "" {
		// Whoever holds the key: a stranger's words stay in their own
		// conversation, and no other sender's turn (with every tool)
		// runs beside them.
		s.refuse(w, r, http.StatusForbidden, why)
		return
	}
	msg := Message{Thread: req.Thread, Text: req.Text, New: req.New, From: from, Hops: hops, Subagent: sub}
	var release func()
	if a.queueable(msg) {
		var free bool
		if release, free = a.tryThread(req.Thread); !free {
			// Its conversation is in a turn, so kept: asked all the same,
			// as a message that waits for its turn is, so a queued one is
			// never the way around the rule.
			if status, why, rule := a.checkKept(req, from, sub != nil); why != "" {
				s.refuseRule(w, r, status, why, rule)
				return
			}
			if s.queue(w, r, a, msg) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				w.WriteHeader(http.StatusOK)
				(&stream{w: w}).send(Event{Queued: true, Done: true})
			}
			return
		}
	} else if release, err = a.takeThread(r.Context(), req.Thread); err != nil {
		s.logf("lnk-harness: agent %s: a message for thread %s left before its turn", a.Name, req.Thread)
		return
	}
	defer release()
	if status, why, rule := a.checkKept(req, from, sub != nil); why != "" {
		s.refuseRule(w, r, status, why, rule)
		return
	}
	if a.Taken != nil && from != "" {
		taken, err := a.Taken(req.Thread, from)
		switch {
		case err != nil:
			s.refuse(w, r, http.StatusServiceUnavailable, "whether thread "+req.Thread+" took this message already can't be read: "+textsafe.Line(err.Error()))
			return
		case taken:
			s.refuse(w, r, http.StatusConflict, AlreadyTaken)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w}
	st.flush()
	tctx := r.Context()
	if from != "" {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(tctx, a.turnLimit())
		defer cancel()
	}
	seq, err := a.Turn.Turn(tctx, msg, func(t string) { st.send(Event{Text: t}) })
	if err != nil {
		why := textsafe.Line(err.Error())
		if r.Context().Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			why = TurnPastLimit(a.turnLimit()) + ": " + why
		}
		s.logf("lnk-harness: agent %s: thread %s: the turn failed: %s", a.Name, req.Thread, why)
		st.send(Event{Error: why})
		return
	}
	st.send(Event{Done: true, Seq: seq})
}

// stream writes a message's answer, a JSON line each, flushed at once.
type stream struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (s *stream) send(e Event) {
	b, _ := json.Marshal(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(append(b, '\n'))
	s.flush()
}

func (s *stream) flush() {
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// TurnPastLimit is why a turn of a message from others ended at its
// limit (OthersTurnLimit), ahead of its error.
func TurnPastLimit(limit time.Duration) string {
	return fmt.Sprintf("the turn passed the %s a turn of a message from others may take, and was ended", limit)
}

// AlreadyTaken is the 409's reason: a sender who speaks once spoke.
const AlreadyTaken = "this sender's message was taken already: it is delivered once"

// hopsOf is the request's Link-Hops: absent is 0; given, it needs a
// Link-From (an owner's message has none) and is a decimal 0..MaxHops
// given once.
func hopsOf(r *http.Request, hasFrom bool) (int, error) {
	vs, ok := r.Header[http.CanonicalHeaderKey(HeaderHops)]
	if !ok {
		return 0, nil
	}
	if !hasFrom {
		return 0, errors.New(HeaderHops + " without " + HeaderFrom + ": an owner's message has no hops")
	}
	if len(vs) != 1 || vs[0] == "" || len(vs[0]) > 4 || strings.Trim(vs[0], "0123456789") != "" {
		return 0, errors.New(HeaderHops + " is not one decimal number")
	}
	n, _ := strconv.Atoi(vs[0])
	if n > MaxHops {
		return 0, fmt.Errorf("%s %d is past the endpoint's %d", HeaderHops, n, MaxHops)
	}
	return n, nil
}
