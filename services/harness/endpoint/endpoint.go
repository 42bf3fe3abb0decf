package endpoint

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// Limits of a request.
const (
	MaxOwnerMessage = 16 << 10 // an owner's message's text, bytes
	maxBody         = 64 << 10 // a message's body, JSON and all
)

// Header names.
const (
	HeaderAgent   = "Link-Agent"
	HeaderAgentID = "Link-Agent-Id"
	HeaderFrom    = "Link-From"
	Purpose       = "endpoint" // the proof's purpose
)

// Paths.
const (
	PathProof   = "/link/proof"
	PathMessage = "/link/message"
)

// Message is what a turn is given.
type Message struct {
	Thread string
	Text   string
	From   string // "" the owner
}

// Turner runs one turn of an agent's: answers msg, giving each text delta
// to onText, and returns the answer's event number.
type Turner interface {
	Turn(ctx context.Context, msg Message, onText func(string)) (seq int64, err error)
}

// Agent is one agent the endpoint answers for.
type Agent struct {
	ID    string
	Owner string
	Name  string
	Key   []byte // nil: every request for it refused 503
	Turn  Turner
	// Senders, if not nil, says whether a Link-From names a sender it
	// takes; nil takes none (only the owner speaks).
	Senders func(from string) bool
}

// Server is the endpoint.
type Server struct {
	Logf func(format string, args ...any) // each refusal, once
}

var errNotBuilt = errors.New("endpoint: not built yet")

// New is a Server answering for agents.
func New(agents []Agent, logf func(format string, args ...any)) (*Server, error) {
	return nil, errNotBuilt
}

// Handler is the endpoint's HTTP handler.
func (s *Server) Handler() http.Handler { return http.NotFoundHandler() }

// Serve serves on l until ctx ends, then waits for the turns running.
func (s *Server) Serve(ctx context.Context, l net.Listener) error { return errNotBuilt }

// Listen listens on 127.0.0.1:port, and nowhere else.
func Listen(port int) (net.Listener, error) { return nil, errNotBuilt }
