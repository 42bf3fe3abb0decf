package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Limits of a request.
const (
	MaxOwnerMessage = 16 << 10 // an owner's message's text, bytes
	// MaxOthersMessage is another sender's message's text, bytes: as
	// much as a webhook's post may carry (security.txt "Webhooks": a
	// body is capped at 1 MiB), so that no post the listener took is
	// refused here and retried by its sender for ever.
	MaxOthersMessage = 1 << 20
	maxBody          = 64 << 10 // an owner's message's body, JSON and all
	// maxOthersBody is another sender's: its text JSON-escaped at worst
	// (\u00XX, six bytes a byte) and the rest.
	maxOthersBody = 6*MaxOthersMessage + 64<<10
	maxProofBody  = 256 // a proof's body
	// shutdownGrace bounds how long a SIGTERM waits for the turns running.
	shutdownGrace = 30 * time.Second
	// OthersTurnLimit is how long the turn of a message from others runs
	// at most, taken at once or run later from its conversation's inbox
	// (the spec names none; the way in has read an answer this long): a
	// turn past it is ended, its error said once. The owner's turns have
	// none: the owner ends one (Ctrl-C).
	OthersTurnLimit = time.Hour
)

// Header names.
const (
	HeaderAgent   = "Link-Agent"
	HeaderAgentID = "Link-Agent-Id"
	// HeaderOwner names the agent's owner where two owners' agents share
	// its ID (a proof carries no key to tell them apart).
	HeaderOwner = "Link-Agent-Owner"
	HeaderFrom  = "Link-From"
	// HeaderHops is a message from others' hop count (decimal, 0 to
	// MaxHops), given only with Link-From; an owner's message has 0.
	HeaderHops = "Link-Hops"
	Purpose    = "endpoint" // the proof's purpose
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
	// New says the owner's message starts conversation Thread (lnk agent
	// send --new): refused where it is kept already. Only the owner's.
	New  bool
	From string // "" the owner
	Hops int    // others' hops (Link-Hops); 0 for the owner's
	// Subagent is a subagent's start's tools and model (Link-Tools,
	// Link-Model); nil for every other message.
	Subagent *Subagent
}

// MaxHops bounds the Link-Hops the endpoint reads; the agent's own cap
// ([tool.scheduler] hops) is the way in's and the scheduler's to keep.
const MaxHops = 1 << 10

// Turner runs one turn of an agent's: answers msg, giving each text delta
// to onText, and returns the answer's event number. ctx ends when the
// caller goes (Ctrl-C in lnk agent chat).
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
	// Senders, if not nil, says whether a Link-From names a sender the
	// agent takes; nil takes any well-formed sender (CheckFrom).
	Senders func(from string) bool
	// Taken, if not nil, says whether thread already took a message
	// from a sender who speaks once (a background command's ending,
	// run:<id>): such a message again is refused 409, never a second
	// turn. Asked while the thread's turn is held.
	Taken func(thread, from string) (bool, error)
	// Queue, if not nil, keeps a message from others that arrives while
	// its thread's turn runs (or while messages wait before it) in the
	// thread's inbox, on the disk before it returns, for a turn after:
	// the message is answered taken at once (Event.Queued), never
	// waiting for the turn. An error refuses the message 503 (the inbox
	// full, or not written), kept nowhere. Not for a subagent's start,
	// whose answer is read, nor a sender who speaks once (run:<id>),
	// whose Taken check needs the thread's turn.
	Queue func(m Message) error
	// RunQueued runs thread's queued messages in the order they came,
	// each once, calling ran after each; the endpoint calls it holding
	// the thread's turn. Needed with Queue.
	RunQueued func(ctx context.Context, thread string, ran func())
	// Waiting, if not nil, is each thread's count of queued messages not
	// yet run when the endpoint starts (a restart runs them).
	Waiting func() (map[string]int, error)
	// Has says whether conversation thread is kept (the harness's store,
	// the one place that knows): a message into one that isn't is
	// refused unless it may start it (conversation.MayStart). Asked while
	// the thread's turn is held; an error refuses.
	Has func(thread string) (bool, error)
	// TurnLimit is how long the turn of a message from others runs at
	// most; 0 is OthersTurnLimit. RunQueued keeps the same for the turns
	// it runs.
	TurnLimit time.Duration
}

// turnLimit is a's limit of a message from others' turn.
func (a *Agent) turnLimit() time.Duration {
	if a.TurnLimit > 0 {
		return a.TurnLimit
	}
	return OthersTurnLimit
}

// Server is the endpoint: one or more agents (the shared harness's case)
// behind one listener.
type Server struct {
	ctx    context.Context // ends when Serve's does: queued turns stop
	queued sync.WaitGroup  // the runs of queued messages going on
	agents []*agentState
	anyKey bool
	logf   func(format string, args ...any)
}

// New is a Server answering for agents; logf gets each refusal once
// (nil: none said).
func New(agents []Agent, logf func(format string, args ...any)) (*Server, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Server{logf: logf, ctx: context.Background()}
	seen := map[string]bool{}
	for _, a := range agents {
		if a.ID == "" || a.Owner == "" || a.Name == "" || a.Turn == nil || a.Has == nil {
			return nil, errors.New("endpoint: an agent needs an ID, an owner, a name, a turn and its conversations")
		}
		if (a.Queue == nil) != (a.RunQueued == nil) {
			return nil, errors.New("endpoint: an agent's Queue needs its RunQueued")
		}
		k := a.ID + "\x00" + a.Owner
		if seen[k] {
			return nil, fmt.Errorf("endpoint: agent %s of %s given twice", a.ID, a.Owner)
		}
		seen[k] = true
		st, err := newAgentState(a)
		if err != nil {
			return nil, err
		}
		s.agents = append(s.agents, st)
		s.anyKey = s.anyKey || a.Key != nil
	}
	if len(s.agents) == 0 {
		return nil, errors.New("endpoint: no agent to answer for")
	}
	return s, nil
}

// Handler is the endpoint's HTTP handler.
func (s *Server) Handler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc(PathProof, s.proof)
	m.HandleFunc(PathMessage, s.message)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !s.anyKey {
			s.refuse(w, r, http.StatusServiceUnavailable, "config.json names no endpoint key: every request is refused until lnk agent start writes one")
			return
		}
		s.refuse(w, r, http.StatusNotFound, "no such path (the endpoint takes "+PathProof+" and "+PathMessage+")")
	})
	return m
}

// Serve serves on l until ctx ends, then waits (at most 30 s) for the
// turns running to finish before it returns.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          nil,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	<-done
	return nil
}

// Listen listens on 127.0.0.1:port, and nowhere else.
func Listen(port int) (net.Listener, error) {
	if port < 1024 || port > 65535 {
		return nil, fmt.Errorf("endpoint: port %d is not within 1024-65535", port)
	}
	return net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// SocketName is the endpoint's unix socket in the harness's home.
const SocketName = "endpoint.sock"

// ListenUnix listens on the unix socket path (0600), taking the place of
// a socket left there by an earlier start; anything else there is
// refused.
func ListenUnix(path string) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("endpoint: %s is there and not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	old := unix.Umask(0o177)
	l, err := net.Listen("unix", path)
	unix.Umask(old)
	return l, err
}
