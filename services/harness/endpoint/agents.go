package endpoint

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"sync"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/refusal"
)

// agentState is one agent served: its own key, proof checker and
// threads, keyed by ID and owner.
type agentState struct {
	Agent
	mu      sync.Mutex // guards checker and threads
	checker *proof.Checker
	threads map[string]chan struct{} // a thread's turn, held while one runs
	waiting map[string]int           // a thread's queued messages not yet run
}

func newAgentState(a Agent) (*agentState, error) {
	st := &agentState{Agent: a, threads: map[string]chan struct{}{}, waiting: map[string]int{}}
	if a.Key != nil {
		c, err := proof.NewChecker(a.Key, proof.Context{AgentID: a.ID, Owner: a.Owner, Purpose: Purpose})
		if err != nil {
			return nil, fmt.Errorf("endpoint: agent %s's key: %w", a.Name, err)
		}
		st.checker = c
	}
	return st, nil
}

// answer is the proof for challenge.
func (a *agentState) answer(ch [proof.ChallengeSize]byte) [proof.AnswerSize]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.checker.Answer(ch)
}

// keyIs compares key with the agent's own in constant time.
func (a *agentState) keyIs(key []byte) bool {
	return a.Key != nil && subtle.ConstantTimeCompare(a.Key, key) == 1
}

// takeThread waits for thread's turn (one turn per thread at a time) and
// returns its release; an error when ctx ends first.
func (a *agentState) takeThread(ctx context.Context, thread string) (func(), error) {
	a.mu.Lock()
	ch, ok := a.threads[thread]
	if !ok {
		ch = make(chan struct{}, 1)
		a.threads[thread] = ch
	}
	a.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refused is a request refused: why, and its HTTP status.
type refused struct {
	refusal.Refusal
	status int
}

func refuse(status int, why string) *refused {
	return &refused{Refusal: refusal.Refusal{Reason: why}, status: status}
}

// named is the agents a request's Link-Agent, Link-Agent-Id and
// Link-Agent-Owner headers can mean, decided before any key is looked at:
// another agent's name or ID is refused (403), an ID and a name that
// disagree 404, a name two owners share given alone 409. More than one
// agent comes back only for an ID two owners share, which the key decides.
func (s *Server) named(r *http.Request) ([]*agentState, *refused) {
	name, id, owner := r.Header.Get(HeaderAgent), r.Header.Get(HeaderAgentID), r.Header.Get(HeaderOwner)
	if name == "" && id == "" {
		return nil, refuse(http.StatusBadRequest, "the request names no agent ("+HeaderAgent+")")
	}
	var out []*agentState
	nameKnown, idKnown := false, false
	for _, a := range s.agents {
		if owner != "" && a.Owner != owner {
			continue // another owner's agent, whatever its name or ID
		}
		nameKnown = nameKnown || (name != "" && a.Name == name)
		idKnown = idKnown || (id != "" && a.ID == id)
		if (id == "" || a.ID == id) && (name == "" || a.Name == name) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		if nameKnown && idKnown {
			return nil, refuse(http.StatusNotFound, "its "+HeaderAgentID+" and "+HeaderAgent+" name different agents")
		}
		return nil, refuse(http.StatusForbidden, "it names an agent this harness doesn't run")
	}
	if id == "" && len(out) > 1 {
		return nil, refuse(http.StatusConflict, "it names by name alone an agent two owners share: name it by "+HeaderAgentID)
	}
	return out, nil
}
