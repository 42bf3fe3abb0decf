package toolbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
)

// A client's notifications/cancelled names the request it cancels by the
// client's id, but the server knows that request by the bridge's own
// (server.go). The bridge puts the bridge's id of that session's request
// in flight in its place, so the server cancels the call the client
// meant; one that names no request of the session in flight is dropped,
// so it can cancel nothing else (another of the session's requests, or
// one the bridge sent under an id the client guessed). The request is
// answered to its client at once, as cancelled, for a server need not
// answer a request once cancelled.

// idKey names a client's id whatever way it was written: a string by its
// value (escapes decoded), a number by its text.
func idKey(id json.RawMessage) string {
	if len(id) == 0 || id[0] != '"' {
		return "n" + string(id)
	}
	if bytes.IndexByte(id, '\\') < 0 {
		return "s" + string(id[1:len(id)-1]) // most ids: no escape to decode
	}
	var s string
	json.Unmarshal(id, &s) // valid JSON: parseMessage took it
	return "s" + s
}

// cancelled relays the client's notifications/cancelled m with the
// bridge's id for the request it names, and answers that request as
// cancelled. It reports false, and sends nothing, when m names no request
// of this session in flight, or names one in a way a server could read
// as another (a requestId written twice, or in another case).
func (s *server) cancelled(m *message) (bool, error) {
	var raw json.RawMessage
	twice := false
	if err := members(m.Params, func(k string, v span) {
		if foldIs(k, "requestId") {
			twice = twice || raw != nil || k != "requestId"
			raw = m.Params[v.Start:v.End]
		}
	}); err != nil || raw == nil || twice {
		return false, nil
	}
	key := idKey(raw)
	s.mu.Lock()
	if q := s.asking[key]; q != nil {
		// Its owner is still being asked: the question is withdrawn and
		// the call answered as cancelled; the server never saw it.
		q.cancelled = true
		s.mu.Unlock()
		q.withdraw()
		return true, nil
	}
	id, ok := s.inFlight[key]
	ch := s.waiting[id]
	s.mu.Unlock()
	if !ok || ch == nil {
		return false, nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return false, nil
	}
	p["requestId"] = strconv.AppendUint(nil, id, 10)
	params, err := json.Marshal(p)
	if err != nil {
		return false, err
	}
	// Answered as cancelled first, then the server told: an answer the
	// server sends once told finds no one waiting and is dropped, so the
	// client's answer is the same however fast the server is.
	s.mu.Lock()
	answered := s.waiting[id] != ch
	if !answered {
		delete(s.waiting, id)
		ch <- answer{cancelled: true}
	}
	s.mu.Unlock()
	if answered {
		return false, nil // the server answered it meanwhile: nothing to cancel
	}
	if err := s.notify(&message{Method: m.Method, Params: params}); err != nil {
		return false, err
	}
	return true, nil
}

// question is a call's question to its owner, while it is put.
type question struct {
	withdraw  context.CancelFunc
	cancelled bool // by the client's notifications/cancelled (under server.mu)
}

// ask runs put, the question of the client's request id, under a context
// a notifications/cancelled naming id withdraws; cancelled reports that
// it was.
func (s *server) ask(ctx context.Context, id json.RawMessage, put func(context.Context)) (cancelled bool) {
	key := idKey(id)
	qctx, withdraw := context.WithCancel(ctx)
	defer withdraw()
	q := &question{withdraw: withdraw}
	s.mu.Lock()
	if s.asking == nil {
		s.asking = map[string]*question{}
	}
	s.asking[key] = q
	s.mu.Unlock()
	put(qctx)
	s.mu.Lock()
	if s.asking[key] == q {
		delete(s.asking, key)
	}
	cancelled = q.cancelled
	s.mu.Unlock()
	return cancelled
}
