package toolbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/lines"
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
	cmd    *exec.Cmd // nil for a shared tool's hub connection (shared.go)
	stdin  io.WriteCloser
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
}

// maxLine caps one message from a server.
const maxLine = 64 << 20

// startServer starts def's command. It returns once the process runs; the
// MCP handshake is the client's, relayed through call.
func startServer(def *tooldef.Definition) (*server, error) {
	env := def.Environ()
	prog, err := lookPath(def.Command[0], envValue(env, "PATH"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, def.Command[1:]...)
	cmd.Args[0] = def.Command[0]
	cmd.Dir = "/"
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	s := &server{cmd: cmd, stderr: &capBuffer{max: 16 << 10}, waiting: map[uint64]chan answer{}, done: make(chan struct{})}
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

func envValue(env []string, k string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds name on the tool's own PATH (its snapshot), never the
// bridge's.
func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue // a relative PATH entry would be relative to /
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the tool's PATH", name)
}

// read dispatches what the server writes until its stdout ends.
func (s *server) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			s.dispatch(line)
		}
		if err != nil {
			break
		}
	}
	if s.cmd != nil {
		s.exitErr = s.cmd.Wait()
	}
	s.mu.Lock()
	for id, ch := range s.waiting {
		close(ch)
		delete(s.waiting, id)
	}
	s.mu.Unlock()
	close(s.done)
}

// errServerTooLong ends a server whose message passed maxLine.
var errServerTooLong = errors.New("a message from the server over its cap")

func readLine(br *bufio.Reader) ([]byte, error) { return lines.Read(br, maxLine, errServerTooLong) }

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
	if err := s.write(b); err != nil {
		return nil, err
	}
	select {
	case a, ok := <-ch:
		if !ok {
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

// stop ends the server and everything it started.
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	s.stdin.Close()
	<-s.done
}

// alive reports whether the server still runs.
func (s *server) alive() bool {
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
