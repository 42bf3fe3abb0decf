package toolbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/lines"
	"lnk.dev/lnk/services/toolbridge/hub"
	"lnk.dev/lnk/services/toolbridge/launch"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// server is one session's MCP server: a process of the tool's command,
// run in / with the definition's environment alone, speaking
// newline-delimited JSON-RPC on its stdin and stdout.
//
// The bridge gives each request an id of its own toward the server and
// puts the client's back on the answer, so a client can neither collide
// with nor answer for anything the server sent; a client's
// notifications/cancelled names the client's id, and is sent with the
// bridge's (cancelled.go). What the server asks of the client is refused
// here; its notifications stay here.
type server struct {
	cmd   *exec.Cmd // nil for a shared tool's hub connection (shared.go), or a server the kernel started
	stdin io.WriteCloser
	// life, for a server the kernel started (KernelChannel), is the
	// write end of the pipe the kernel waits on: closing it has the
	// kernel kill the server's process group and reap it.
	life   io.Closer
	stderr *capBuffer

	writeMu sync.Mutex
	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan answer
	// inFlight maps a client's id (idKey) to the bridge's, for each
	// request of the client's still waiting for its answer.
	inFlight map[string]uint64
	// asking maps a client's id (idKey) to its call's question to the
	// owner, while one is put (cancelled.go): a cancel then withdraws
	// the question, and the call never reaches the server.
	asking  map[string]*question
	done    chan struct{} // closed when its stdout ends
	exitErr error
	// max caps one message from it (maxAnswer, or hubLine).
	max int
	// grace is how long stop lets it end on its own once its input is
	// closed, before it is killed: Link's own client of a tool at a URL
	// ends its remote session (streamable HTTP's DELETE) then. Zero for
	// any other server, killed at once.
	grace time.Duration
	// ended says why its output was no longer read, when that was the
	// bridge's doing (a message over the cap); set before done closes.
	ended error
	// stopping is set once stop began: from then on it is gone to every
	// request, though one given a grace may still run.
	stopping atomic.Bool
}

// maxAnswer caps one message from a tool's server, as MaxBody caps one
// from a client: the tool bridge's one cap, on a request and on an
// answer (tools-and-asking.txt "Reaching it", and "Namespace servers":
// request and answer sizes keep the tool bridge's cap). A server whose
// message passes it is ended (read).
const maxAnswer = MaxBody

// hubLine caps one message from a shared tool's hub: its server's cap,
// and room for the id the hub puts back in place of its own.
const hubLine = hub.MaxLine + hub.IDRoom

// remoteGrace is how long a tool at a URL's client (lnk-mcp-remote) has,
// once its input is closed, to end its remote session before it is
// killed: its DELETE waits at most 5 s (remote.Client.close).
const remoteGrace = 6 * time.Second

// startServer starts def's command. It returns once the process runs; the
// MCP handshake is the client's, relayed through call.
func startServer(def *tooldef.Definition) (*server, error) {
	cmd, err := launch.Command(def, def.Environ())
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stderr: &capBuffer{max: 16 << 10}, waiting: map[uint64]chan answer{}, done: make(chan struct{}), max: maxAnswer}
	if def.URL != "" {
		s.grace = remoteGrace
	}
	cmd.Stderr = s.stderr
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", def.Command[0], err)
	}
	go s.read(out)
	return s, nil
}

// read dispatches what the server writes until its stdout ends, or until
// a message passes its cap. Either way the server is ended then, its
// whole process group, before it is waited for: one still writing a
// message too long would block on a pipe no one reads and never exit,
// holding its session's call, every later one, and its place, for ever.
// Every call waiting is then answered as gone (call).
func (s *server) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := lines.Read(br, s.max, errServerTooLong)
		if len(bytes.TrimSpace(line)) > 0 {
			s.dispatch(line)
		}
		if err != nil {
			if errors.Is(err, errServerTooLong) {
				s.ended = fmt.Errorf("%w of %d bytes, so it was ended", errServerTooLong, s.max)
			}
			break
		}
	}
	switch {
	case s.cmd != nil:
		// The leader is not yet waited for, so its group's id is still
		// its own.
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.exitErr = s.cmd.Wait()
	case s.life != nil:
		s.stdin.Close()
		s.life.Close() // the kernel kills its group and reaps it
	default:
		s.stdin.Close() // a hub's connection: the hub ends the session
	}
	s.mu.Lock()
	for id, ch := range s.waiting {
		close(ch)
		delete(s.waiting, id)
	}
	s.mu.Unlock()
	close(s.done)
}

// errServerTooLong ends a server whose message passed its cap.
var errServerTooLong = errors.New("a message from the tool's server over the bridge's cap")

func (s *server) dispatch(line []byte) {
	line = bytes.TrimSpace(line) // an answer passed on starts with its '{' (writeReply's type)
	f, err := readAnswer(line)
	if err != nil || f.dup {
		return // not one JSON-RPC message: the server's noise stays outside
	}
	var id json.RawMessage
	if f.hasID {
		id = line[f.id.Start:f.id.End]
	}
	var method string
	if f.hasMethod && json.Unmarshal(line[f.method.Start:f.method.End], &method) != nil {
		return
	}
	m := message{ID: id, Method: method}
	switch {
	case m.isResponse():
		n, err := strconv.ParseUint(string(id), 10, 64)
		if err != nil {
			return
		}
		s.mu.Lock()
		ch := s.waiting[n]
		delete(s.waiting, n)
		s.mu.Unlock()
		if ch != nil {
			ch <- answer{line: line, id: f.id}
		}
	case m.isRequest():
		// What a server asks of the client (sampling, elicitation, roots)
		// is refused outside and never reaches the sandbox. A ping is
		// answered, so a server that checks its client keeps going.
		if m.Method == "ping" {
			s.write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`))
			return
		}
		s.write(errorResponse(m.ID, codeMethodNotFound, "refused outside the sandbox: Link's bridge answers no request of a server"))
	default:
		// Notifications (logging, progress, list changes) stay outside.
	}
}

// answer is a server's answer to one of the bridge's requests, and where
// its id lies in it; or, cancelled, the bridge's own for a request its
// client cancelled.
type answer struct {
	line      []byte
	id        span
	cancelled bool
}

// write sends b, one message, and the newline that ends it.
func (s *server) write(b []byte) error {
	b = append(b, '\n')
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.stdin.Write(b); err != nil {
		return fmt.Errorf("writing to the tool's server: %w", err)
	}
	return nil
}

// errServerGone is returned for a call whose server ended.
var errServerGone = errors.New("the tool's server ended")

// call sends a request with the bridge's own id and returns the answer
// with the client's id put back. ctx only stops the waiting: a call sent
// is left to run (a client that closes lets it go).
func (s *server) call(ctx context.Context, m *message) ([]byte, error) {
	key := idKey(m.ID)
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan answer, 1)
	s.waiting[id] = ch
	if s.inFlight == nil {
		s.inFlight = map[string]uint64{}
	}
	s.inFlight[key] = id // a client that reuses an id in flight cancels its latest
	s.mu.Unlock()
	defer s.forget(id, key)
	b, err := encodeMessage(strconv.AppendUint(nil, id, 10), m)
	if err != nil {
		return nil, err
	}
	if !s.alive() {
		return nil, errServerGone
	}
	if err := s.write(b); err != nil {
		if !s.alive() {
			return nil, errServerGone
		}
		return nil, err
	}
	select {
	case a, ok := <-ch:
		if !ok {
			if s.ended != nil {
				return nil, fmt.Errorf("%w: %v", errServerGone, s.ended)
			}
			return nil, errServerGone
		}
		if a.cancelled {
			return errorResponse(m.ID, codeCancelled, "cancelled by the client (notifications/cancelled)"), nil
		}
		return withID(a, m.ID), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget ends the wait for the bridge's request id, the client's key.
func (s *server) forget(id uint64, key string) {
	s.mu.Lock()
	delete(s.waiting, id)
	if s.inFlight[key] == id {
		delete(s.inFlight, key)
	}
	s.mu.Unlock()
}

// notify sends a notification: its method and params, no id.
func (s *server) notify(m *message) error {
	b, err := encodeMessage(nil, m)
	if err != nil {
		return err
	}
	return s.write(b)
}

// encodeMessage writes what the bridge sends a server of a client's
// request or notification: the method it judged, id (none if nil) and
// the params as they are, on one line. Nothing else of the client's
// message passes. Params are the bytes parseMessage took as valid JSON
// and the call was judged on: a raw line break can lie only between
// their tokens, so params with none pass byte for byte, and the rest are
// compacted (their strings unchanged).
func encodeMessage(id []byte, m *message) ([]byte, error) {
	method, err := jsonString(m.Method)
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(make([]byte, 0, 48+len(id)+len(method)+len(m.Params)+1))
	b.WriteString(`{"jsonrpc":"2.0"`)
	if id != nil {
		b.WriteString(`,"id":`)
		b.Write(id)
	}
	b.WriteString(`,"method":`)
	b.Write(method)
	if len(m.Params) > 0 {
		b.WriteString(`,"params":`)
		if bytes.IndexByte(m.Params, '\n') < 0 && bytes.IndexByte(m.Params, '\r') < 0 {
			b.Write(m.Params)
		} else if err := json.Compact(b, m.Params); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonString is s as a JSON string, as json.Marshal writes it; a method
// name of plain letters, digits and /_.- (MCP's own) is quoted as it is.
func jsonString(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '_' || c == '.' || c == '-') {
			return json.Marshal(s)
		}
	}
	return append(append(append(make([]byte, 0, len(s)+2), '"'), s...), '"'), nil
}

// withID puts id in place of an answer's id, keeping the rest as the
// server wrote it.
func withID(a answer, id json.RawMessage) []byte {
	return jsonscan.Splice(a.line, a.id, id)
}

// stop ends the server and everything it started. Its input is closed
// first; one with a grace (a tool at a URL's client) may end on its own
// within it, and is killed after.
func (s *server) stop() {
	s.stopping.Store(true)
	s.stdin.Close()
	if s.grace > 0 {
		t := time.NewTimer(s.grace)
		defer t.Stop()
		select {
		case <-s.done:
			return
		case <-t.C:
		}
	}
	if s.cmd != nil && s.cmd.Process != nil {
		select {
		case <-s.done: // waited for: its group's id may be another's now
		default:
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	if s.life != nil {
		s.life.Close() // the kernel kills its group: its output ends
	}
	<-s.done
}

// alive reports whether the server still runs and is not being stopped.
func (s *server) alive() bool {
	if s.stopping.Load() {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// capBuffer keeps the first max bytes written to it: a server's stderr,
// shown when it never starts.
type capBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}
