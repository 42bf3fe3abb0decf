package toolbridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/procs"
	"lnk.dev/lnk/internal/toolrefusal"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Definitions is where the bridge reads a tool's definition at each
// request, so a tool added again or removed takes effect at once.
type Definitions interface {
	Load(name string) (*tooldef.Definition, error)
}

// Event is one line of the wire's log: never a call's arguments or answer.
type Event struct {
	Agent   string `json:"agent"`
	Tool    string `json:"tool"`
	Call    string `json:"call"`    // the method, or a tools/call's name
	Outcome string `json:"outcome"` // passed, asked-yes, refused: why, …
}

// Bridge runs one sandbox's tools: its sessions, their servers, and what
// passes between a client in the sandbox and each server.
type Bridge struct {
	Agent    string               // the agent the sandbox runs for (logs, questions)
	Grants   map[string]caps.Tool // the sandbox's [tools]: only these are reached
	Defs     Definitions
	Asker    Asker       // nil: a call that must ask is refused
	Log      func(Event) // nil: nothing logged
	Settings Settings
	Hubs     Hubs // where shared tools' hubs are reached (shared.go)
	// Kernel, if set, is where the bridge gets its servers: a confined
	// bridge (lnk-toolbridge) starts none itself (kernel_channel.go).
	Kernel *KernelChannel
	// OnRefusal, if set, is told of each call refused by the tool's rules
	// or the bridge (askbroker's CountRefusal, toward a pause), but not of
	// one its Asker counted itself ([RefusalCounter]: askbroker counts an
	// owner's no and a question unanswered), so none counts twice.
	OnRefusal func()
	// AdaptProcs runs this process on one P while the bridge serves a
	// request or two at a time, and on every core under more
	// (internal/procs): for lnk sandbox run, whose process hosts one
	// bridge and otherwise only waits, never a program with other work.
	AdaptProcs bool

	procs    *procs.Adapter // nil unless AdaptProcs
	defs     defCache       // digests of definitions by their file's identity
	once     sync.Once
	mu       sync.Mutex
	sessions map[string]*session
	slots    chan struct{} // one per live or starting session
	starts   chan struct{} // one per starting session
	stopReap chan struct{}
	closed   bool
	refused  int                // refused calls, toward a pause
	reads    uint64             // readings of definitions begun (sawDefinition)
	seen     map[string]seenDef // each tool's latest reading
}

// seenDef is what a reading found of a tool's definition: its digest, ""
// for none.
type seenDef struct {
	digest string
	read   uint64
}

// Reply is the bridge's answer to one request.
type Reply struct {
	Status    int
	Body      []byte // a JSON-RPC message, or a line of text for a refusal without one
	SessionID string // set on the answer to initialize
}

func (b *Bridge) init() {
	b.once.Do(func() {
		b.Settings = b.Settings.orDefaults()
		b.sessions = map[string]*session{}
		b.slots = make(chan struct{}, b.Settings.Sessions)
		b.starts = make(chan struct{}, b.Settings.Starts)
		b.stopReap = make(chan struct{})
		if b.AdaptProcs {
			b.procs = procs.New()
		}
		go b.reap()
	})
}

func (b *Bridge) log(tool, call, outcome string) {
	if b.Log != nil {
		b.Log(Event{Agent: b.Agent, Tool: tool, Call: call, Outcome: outcome})
	}
}

func text(status int, msg string) Reply { return Reply{Status: status, Body: []byte(msg + "\n")} }

// Handle answers one request: body is one JSON-RPC message for tool, in
// the session sessionID ("" to start one with initialize). ctx ends when
// the client has closed its connection (a half-close is not a close).
func (b *Bridge) Handle(ctx context.Context, tool, sessionID string, body []byte) Reply {
	b.init()
	if len(body) > MaxBody {
		b.log(tool, "", "refused: "+ErrTooLarge.Error())
		return text(http.StatusRequestEntityTooLarge, ErrTooLarge.Error())
	}
	if _, ok := b.Grants[tool]; !ok {
		b.log(tool, "", "refused: not granted")
		return text(http.StatusForbidden, fmt.Sprintf("tool %s is not granted to this sandbox (%s)", tool, grantHint(b.Agent, tool, "")))
	}
	m, err := parseMessage(body)
	if err != nil {
		b.log(tool, "", "refused: "+err.Error())
		return text(http.StatusBadRequest, err.Error())
	}
	if sessionID == "" && m.Method == methodDiscover && m.isRequest() {
		return notOffered(m)
	}
	// The file's identity is taken before it is read, so a change in
	// between is read again at the next request (defcache.go).
	digest, id, known := b.cachedDigest(tool)
	if sessionID == "" || digest == "" {
		read := b.nextRead()
		def, err := b.Defs.Load(tool)
		if err != nil {
			b.sawDefinition(tool, "", read) // removed (or unreadable): its sessions end
			b.log(tool, m.Method, "refused: "+err.Error())
			if errors.Is(err, tooldef.ErrNotFound) {
				return text(http.StatusNotFound, fmt.Sprintf("tool %s was removed", tool))
			}
			return text(http.StatusBadGateway, err.Error())
		}
		digest = def.Digest()
		if known {
			b.remember(tool, id, digest)
		}
		b.sawDefinition(tool, digest, read)
		if sessionID == "" {
			defer def.Destroy()
			if m.Method != "initialize" || !m.isRequest() {
				b.log(tool, m.Method, "refused: no session")
				return text(http.StatusBadRequest, "no session: a session starts with initialize")
			}
			return b.start(ctx, tool, def, digest, read, m)
		}
		def.Destroy()
	}
	s := b.lookup(sessionID, tool)
	if s == nil || s.digest != digest || !s.srv.alive() {
		if s != nil && !s.srv.stopping.Load() { // one ending already is left to its end
			b.end(s)
		}
		b.log(tool, m.Method, "refused: session gone")
		if m.isRequest() {
			return Reply{Status: http.StatusNotFound, Body: errorResponse(m.ID, codeGone, "the session is gone: start another with initialize")}
		}
		return text(http.StatusNotFound, "the session is gone")
	}
	return b.relay(ctx, s, m)
}

// relay passes one message of a live session.
func (b *Bridge) relay(ctx context.Context, s *session, m *message) Reply {
	if m.isNotification() {
		if !notificationsPassed[m.Method] {
			b.countRefusal(false)
			b.log(s.tool, m.Method, "refused: a message without an id that is not one of MCP's notifications")
			return text(http.StatusForbidden, fmt.Sprintf("%s without an id is refused: only MCP's own notifications reach a server", m.Method))
		}
		if m.Method == "notifications/cancelled" {
			// Sent with the bridge's id for the request it names, or
			// dropped if none of this session's is in flight (cancelled.go).
			if _, err := s.srv.cancelled(m); err != nil {
				return text(http.StatusBadGateway, err.Error())
			}
			return Reply{Status: http.StatusAccepted}
		}
		if err := s.srv.notify(m); err != nil {
			return text(http.StatusBadGateway, err.Error())
		}
		return Reply{Status: http.StatusAccepted}
	}
	if m.isResponse() {
		b.log(s.tool, "", "refused: an answer to a request no server may send")
		return text(http.StatusForbidden, "a client answers nothing: the bridge refuses what servers ask of it")
	}
	call, asks, err := callName(m)
	if err != nil {
		b.countRefusal(false)
		b.log(s.tool, m.Method, "refused: "+err.Error())
		return Reply{Status: http.StatusOK, Body: errorResponse(m.ID, codeRefused, "refused: "+err.Error())}
	}
	logName, passed := m.Method, "passed"
	if asks {
		logName = call
		var v verdict
		if s.srv.ask(ctx, m.ID, func(ctx context.Context) { v = b.mayCall(ctx, s, m, call) }) {
			b.log(s.tool, call, "cancelled by the client while its owner was asked")
			return Reply{Status: http.StatusOK, Body: errorResponse(m.ID, codeCancelled, "cancelled by the client (notifications/cancelled)")}
		}
		if v.asked && v.ok {
			passed = "passed: the owner said yes"
		}
		if !v.ok {
			b.countRefusal(v.counted)
			b.log(s.tool, call, "refused: "+v.why)
			return Reply{Status: http.StatusOK, Body: errorResponse(m.ID, codeRefused, "refused: "+v.why)}
		}
	}
	params, err := stripParams(m) // an initialize inside a session too
	if err != nil {
		return text(http.StatusBadRequest, err.Error())
	}
	m.Params = params
	s.touch(+1)
	answer, err := s.srv.call(context.WithoutCancel(ctx), m)
	s.touch(-1)
	if err != nil {
		b.end(s)
		b.log(s.tool, logName, "failed: "+err.Error())
		if errors.Is(err, errServerGone) {
			// The session is no more: streamable HTTP's 404 tells the
			// client to start another with initialize.
			return Reply{Status: http.StatusNotFound, Body: errorResponse(m.ID, codeGone, err.Error()+": the session is gone, start another with initialize")}
		}
		return Reply{Status: http.StatusBadGateway, Body: errorResponse(m.ID, codeGone, err.Error())}
	}
	if m.Method == "tools/list" {
		if h := hintsFromList(answer); h != nil {
			s.setHints(h)
		}
	}
	if why, ok := ownRefusal(s.tool, m.Method, answer); ok {
		// Link's own tool refused the call by its own rules: the audit
		// log says so, with the tool's reason, once, and it counts
		// toward a pause as every refused call does.
		b.countRefusal(false)
		passed = "refused: " + why
	}
	b.log(s.tool, logName, passed)
	if ctx.Err() != nil {
		return Reply{} // the client left while the owner was asked; the call went on and its answer has nowhere to go
	}
	return Reply{Status: http.StatusOK, Body: answer}
}

// ownRefusal is the reason Link's own run or file tool gave for refusing
// a tools/call by its own rules (internal/toolrefusal): read from those
// tools alone, whose names no added tool can take.
func ownRefusal(tool, method string, answer []byte) (string, bool) {
	if method != "tools/call" || !(strings.HasPrefix(tool, "run-") || strings.HasPrefix(tool, "file-")) {
		return "", false
	}
	return toolrefusal.Reason(answer)
}

// verdict is what a call's rules, or its owner, said of it.
type verdict struct {
	ok    bool
	why   string // why it was refused
	asked bool   // the owner was asked
	// counted is set for a refusal the Asker counted toward the pause
	// itself (a [RefusalCounter]'s): the bridge does not count it again.
	counted bool
}

// mayCall applies the tool's rules, asking the owner where they say to.
func (b *Bridge) mayCall(ctx context.Context, s *session, m *message, call string) verdict {
	if allowed(b.Grants[s.tool], call) {
		return verdict{ok: true}
	}
	if b.Asker == nil {
		return verdict{why: fmt.Sprintf("%s is not allowed by name and no one can be asked (%s)", call, grantHint(b.Agent, s.tool, call))}
	}
	watchClient(ctx) // asking waits for the owner: not for a client gone
	args := argumentsOf(m)
	ok, err := b.Asker.Ask(ctx, Question{Agent: b.Agent, Tool: s.tool, Call: call, Hints: s.hintsOf(call), Arguments: args, Digest: digestOf(args)})
	if ok && err == nil {
		return verdict{ok: true, asked: true}
	}
	v := verdict{why: "the owner said no", asked: true}
	var or *OwnerRefusal
	switch {
	case errors.As(err, &or):
		v.why = or.Reason // refused, timed out or refused at once, with the --allow
	case err != nil:
		v.why = "asking failed: " + err.Error()
	}
	if c, isCounter := b.Asker.(RefusalCounter); isCounter {
		v.counted = c.Counted(err)
	}
	return v
}

// countRefusal counts a call refused, and tells OnRefusal unless the
// Asker counted it toward the pause already (byAsker).
func (b *Bridge) countRefusal(byAsker bool) {
	b.mu.Lock()
	b.refused++
	b.mu.Unlock()
	if b.OnRefusal != nil && !byAsker {
		b.OnRefusal()
	}
}

// Refused counts the calls refused so far, toward a pause.
func (b *Bridge) Refused() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// start makes a session: a slot among the sandbox's sessions, a turn
// among those starting, a server, and the client's initialize relayed
// with the client's capabilities removed.
func (b *Bridge) start(ctx context.Context, tool string, def *tooldef.Definition, digest string, read uint64, m *message) Reply {
	watchClient(ctx) // a client that closes before its session started gets none
	deadline := time.NewTimer(b.Settings.StartWait)
	defer deadline.Stop()
	if !b.acquire(ctx, b.slots, deadline.C) {
		return b.notStarted(ctx, tool)
	}
	if !b.acquire(ctx, b.starts, deadline.C) {
		<-b.slots
		return b.notStarted(ctx, tool)
	}
	defer func() { <-b.starts }()
	srv, started, err := b.serverFor(ctx, def)
	if err != nil {
		<-b.slots
		b.log(tool, "initialize", "failed: "+err.Error())
		return Reply{Status: http.StatusBadGateway, Body: errorResponse(m.ID, codeGone, err.Error())}
	}
	if started != digest {
		// The kernel read the definition after the bridge did, and found
		// another: the session would not run as the tool read here.
		srv.stop()
		<-b.slots
		b.log(tool, "initialize", "refused: the tool was added again or removed while its session started")
		return Reply{Status: http.StatusNotFound, Body: errorResponse(m.ID, codeGone, "the tool was added again or removed while this session started: start another with initialize")}
	}
	params, err := stripParams(m)
	if err != nil {
		srv.stop()
		<-b.slots
		return text(http.StatusBadRequest, err.Error())
	}
	m.Params = params
	answer, err := srv.call(ctx, m)
	if err != nil {
		// A client that closed before its session started gets none: the
		// server is stopped and holds no place.
		srv.stop()
		<-b.slots
		if ctx.Err() != nil {
			b.log(tool, "initialize", "abandoned: the client closed before its session started")
			return Reply{}
		}
		msg := err.Error()
		if e := srv.stderr.String(); e != "" {
			msg += "; it wrote: " + e
		}
		b.log(tool, "initialize", "failed: "+err.Error())
		return Reply{Status: http.StatusBadGateway, Body: errorResponse(m.ID, codeGone, msg)}
	}
	s := &session{id: newSessionID(), tool: tool, digest: digest, read: read, srv: srv, last: time.Now()}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		srv.stop()
		<-b.slots
		return text(http.StatusServiceUnavailable, "the bridge is closing")
	}
	if d := b.seen[tool]; d.read > read && d.digest != digest {
		// Added again or removed while it started: it would run as the
		// tool was, so it ends now, as those started before did.
		b.mu.Unlock()
		srv.stop()
		<-b.slots
		b.log(tool, "initialize", "refused: the tool was added again or removed while its session started")
		return Reply{Status: http.StatusNotFound, Body: errorResponse(m.ID, codeGone, "the tool was added again or removed while this session started: start another with initialize")}
	}
	b.sessions[s.id] = s
	b.mu.Unlock()
	b.log(tool, "initialize", "passed")
	return Reply{Status: http.StatusOK, Body: answer, SessionID: s.id}
}

func (b *Bridge) acquire(ctx context.Context, sem chan struct{}, deadline <-chan time.Time) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-deadline:
	case <-ctx.Done():
	}
	return false
}

func (b *Bridge) notStarted(ctx context.Context, tool string) Reply {
	if ctx.Err() != nil {
		b.log(tool, "initialize", "abandoned: the client closed while waiting its turn")
		return Reply{}
	}
	b.log(tool, "initialize", "refused: still waiting for a turn")
	return text(http.StatusTooManyRequests, fmt.Sprintf("no session free after %s: this sandbox keeps at most %d, %d starting at once", b.Settings.StartWait, b.Settings.Sessions, b.Settings.Starts))
}

func (b *Bridge) lookup(id, tool string) *session {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessions[id]
	if s == nil || s.tool != tool {
		return nil
	}
	return s
}

// end stops a session's server, then forgets the session and frees its
// place: a session counted gone has no server left (one given a grace,
// a tool at a URL's client ending its remote session, holds its place
// until it ends). Ending twice is a no-op.
func (b *Bridge) end(s *session) {
	b.mu.Lock()
	_, ok := b.sessions[s.id]
	b.mu.Unlock()
	if !ok {
		return
	}
	s.srv.stop()
	b.mu.Lock()
	_, ok = b.sessions[s.id]
	delete(b.sessions, s.id)
	b.mu.Unlock()
	if ok {
		<-b.slots
	}
}

// nextRead numbers a reading of a definition, in the order they began.
func (b *Bridge) nextRead() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads++
	return b.reads
}

// sawDefinition takes what reading read found of tool's definition: its
// digest, or "" for none (removed, or unreadable). Every session of tool
// whose definition was read before and differs ends at once, its server
// stopped and its place freed, rather than at its next request: a tool
// added again or removed leaves no server running as it was (with a
// token replaced), and no place held. Their next request is answered as
// gone (the session is no more). A reading that began before another
// ends no session the other's definition started: one that raced a
// rename and read the old file ends nothing newer.
func (b *Bridge) sawDefinition(tool, digest string, read uint64) {
	b.mu.Lock()
	if d, ok := b.seen[tool]; ok && d.read > read {
		b.mu.Unlock()
		return // a later reading was taken already
	}
	if b.seen == nil {
		b.seen = map[string]seenDef{}
	}
	b.seen[tool] = seenDef{digest: digest, read: read}
	var stale []*session
	for _, s := range b.sessions {
		if s.tool == tool && s.digest != digest && s.read < read {
			stale = append(stale, s)
		}
	}
	b.mu.Unlock()
	why := "session ended: the tool was added again"
	if digest == "" {
		why = "session ended: the tool was removed"
	}
	for _, s := range stale {
		b.end(s)
		b.log(tool, "", why)
	}
}

// Terminate ends the session id of tool, as a client's DELETE asks.
func (b *Bridge) Terminate(tool, id string) {
	b.init()
	if s := b.lookup(id, tool); s != nil {
		b.end(s)
		b.log(tool, "", "session ended by its client")
	}
}

// Sessions counts the live sessions.
func (b *Bridge) Sessions() int {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// recheck reads again the definition of each tool with a live session
// whose file is not the one last read (defcache.go: an lstat each, no
// read while it is), so a tool added again or removed ends its sessions
// within a tick of the reaper even when none of them makes a request.
func (b *Bridge) recheck() {
	b.mu.Lock()
	tools := map[string]bool{}
	for _, s := range b.sessions {
		tools[s.tool] = true
	}
	b.mu.Unlock()
	for tool := range tools {
		digest, id, known := b.cachedDigest(tool)
		if digest != "" {
			continue // the file last read
		}
		read := b.nextRead()
		def, err := b.Defs.Load(tool)
		if err != nil {
			b.sawDefinition(tool, "", read)
			continue
		}
		digest = def.Digest()
		def.Destroy()
		if known {
			b.remember(tool, id, digest)
		}
		b.sawDefinition(tool, digest, read)
	}
}

// reap ends sessions with no call for Settings.Idle, those whose server
// ended (so an idle one holds no place), and those of a tool added again
// or removed (recheck).
func (b *Bridge) reap() {
	tick := time.NewTicker(max(b.Settings.Idle/10, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-b.stopReap:
			return
		case now := <-tick.C:
			b.mu.Lock()
			var idle []*session
			for _, s := range b.sessions {
				if d, busy := s.idleFor(now); !busy && (d >= b.Settings.Idle || !s.srv.alive()) {
					idle = append(idle, s)
				}
			}
			b.mu.Unlock()
			for _, s := range idle {
				why := "session ended: idle"
				if !s.srv.alive() {
					why = "session ended: its server ended"
				}
				b.end(s)
				b.log(s.tool, "", why)
			}
			b.recheck()
		}
	}
}

// Close ends every session and stops the bridge.
func (b *Bridge) Close() {
	b.init()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	var ss []*session
	for _, s := range b.sessions {
		ss = append(ss, s)
	}
	b.mu.Unlock()
	close(b.stopReap)
	for _, s := range ss {
		b.end(s)
	}
}
