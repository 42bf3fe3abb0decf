package filetool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/stdpipe"
	"lnk.dev/lnk/internal/wire"
)

// maxAnswer is the longest answer line taken from the sandboxed process.
const maxAnswer = 8 << 20

// stderrKept is how much of the process's last stderr an error quotes.
const stderrKept = 4 << 10

// Sandboxed is the session's sandboxed process: started at the first
// call, kept for the session, started again at the call after it ended,
// and then handed the session's versions first ([seen]). Its calls run
// one at a time.
type Sandboxed struct {
	Argv []string
	Env  []string  // nil: this process's environment
	Log  io.Writer // a copy of its stderr, or nil

	mu   sync.Mutex
	p    *proc
	seen seen // the session's versions, as the answers said them
}

type proc struct {
	cmd      *exec.Cmd
	in       *stdpipe.Pipe
	out      *bufio.Reader
	outFile  *stdpipe.Pipe
	tail     *tail
	done     chan struct{} // closed once it was waited for
	answered bool          // it answered a call
	hello    []byte        // seen lines to send before its first call
}

// CallError is the sandboxed process's own {"error"} answer: a refusal
// or a failed call, said in its words; Refused when it said it refused
// the call by the file tool's rules.
type CallError struct {
	Msg     string
	Refused bool
}

func (e *CallError) Error() string { return e.Msg }

// Call sends one call and waits for its answer.
func (s *Sandboxed) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := bytes.TrimSpace(args); len(a) == 0 || bytes.Equal(a, []byte("null")) {
		args = json.RawMessage("{}") // a client that sent none
	}
	line, err := callLine(name, args)
	if err != nil {
		return nil, err
	}
	p, err := s.running()
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, p.kill)
	ans, err := p.roundTrip(line)
	if errors.Is(err, errNotSent) && p.answered {
		// It ended since its last answer and never read this call: start
		// it again and send the call to the new one.
		p.kill()
		p.ended(ctx, err)
		s.p = nil
		stop()
		if p, err = s.running(); err != nil {
			return nil, err
		}
		stop = context.AfterFunc(ctx, p.kill)
		ans, err = p.roundTrip(line)
	}
	stop()
	if err != nil {
		p.kill()
		s.p = nil
		return nil, p.ended(ctx, err)
	}
	p.answered = true
	s.seen.learn(name, args, ans.OK, ans.Error)
	if ans.Error != "" {
		return nil, &CallError{Msg: ans.Error, Refused: ans.Refused}
	}
	return ans.OK, nil
}

// callLine is the line of one call, {"name", "arguments"}, its arguments
// compacted (no newline in them), and its newline.
func callLine(name string, args json.RawMessage) ([]byte, error) {
	q, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(make([]byte, 0, len(q)+len(args)+24))
	b.WriteString(`{"name":`)
	b.Write(q)
	b.WriteString(`,"arguments":`)
	if err := json.Compact(b, args); err != nil {
		return nil, fmt.Errorf("the call's arguments are not JSON: %v", err)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// running is the session's process, started if there is none or the
// last one ended.
func (s *Sandboxed) running() (*proc, error) {
	if s.p != nil {
		select {
		case <-s.p.done:
			s.p.outFile.Close()
			s.p = nil // it ended since the last call
		default:
		}
	}
	if s.p == nil {
		p, err := s.start()
		if err != nil {
			return nil, err
		}
		if s.seen == nil {
			s.seen = seen{}
		}
		p.hello = s.seen.lines()
		s.p = p
	}
	return s.p, nil
}

// errNotSent is a call the process never read: its stdin was closed.
var errNotSent = errors.New("the call could not be sent")

func (s *Sandboxed) start() (*proc, error) {
	if len(s.Argv) == 0 {
		return nil, errors.New("no command to run the calls in")
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env = s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd, tail: &tail{copy: s.Log}, done: make(chan struct{})}
	cmd.Stderr = p.tail
	// Its stdin and stdout are pipes of this package's own, read and
	// written without the runtime's system call path (stdpipe.Pipe); Wait never
	// closes them under a read in flight.
	inChild, in, err := stdpipe.ForChild(true)
	if err != nil {
		return nil, err
	}
	outChild, out, err := stdpipe.ForChild(false)
	if err != nil {
		inChild.Close()
		in.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inChild, outChild
	err = cmd.Start()
	inChild.Close()
	outChild.Close()
	if err != nil {
		in.Close()
		out.Close()
		return nil, fmt.Errorf("the file tool's sandbox did not start: %v", err)
	}
	p.in, p.outFile, p.out = in, out, bufio.NewReaderSize(out, 64<<10)
	go func() { cmd.Wait(); close(p.done) }()
	return p, nil
}

type answer struct {
	OK      json.RawMessage `json:"ok"`
	Error   string          `json:"error"`
	Refused bool            `json:"refused"`
}

func (p *proc) roundTrip(line []byte) (answer, error) {
	if p.hello != nil {
		// Written under the call's context, like the call: a process that
		// never reads them is killed when the call is cancelled.
		hello := p.hello
		p.hello = nil
		if _, err := p.in.Write(hello); err != nil {
			return answer{}, fmt.Errorf("%w: %v", errNotSent, err)
		}
	}
	if _, err := p.in.Write(line); err != nil {
		return answer{}, fmt.Errorf("%w: %v", errNotSent, err)
	}
	var buf []byte
	for {
		chunk, err := p.out.ReadSlice('\n')
		if len(buf)+len(chunk) > maxAnswer {
			return answer{}, fmt.Errorf("an answer past %d MiB", maxAnswer>>20)
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return answer{}, err
		}
		break
	}
	return decodeAnswer(buf)
}

var errBadAnswer = errors.New("an answer that is neither {\"ok\"} nor {\"error\"}")

// decodeAnswer decodes one answer line from the sandboxed process
// strictly: one object, {"ok": value} or {"error": "words"}, nothing
// else, no key twice or in another case, nothing after it. An answer as
// apply writes it is taken by one pass ([fastAnswer]); any other spelling
// goes through Link's one strict decoder ([strictAnswer]).
// FuzzDecodeAnswer holds the two to the same answers and refusals.
func decodeAnswer(line []byte) (answer, error) {
	if a, taken, ok := fastAnswer(line); taken {
		if !ok {
			return answer{}, errBadAnswer
		}
		return a, nil
	}
	return strictAnswer(line)
}

// fastAnswer takes a line as apply writes it, {"ok": then the value then
// }, checking in one pass that the value is one JSON value (not null) and
// nothing more: taken says the line is of that shape, ok that it is an
// answer ([strictAnswer] refuses what it refuses, a second key above all).
func fastAnswer(line []byte) (a answer, taken, ok bool) {
	v, taken := bytes.CutPrefix(bytes.TrimSpace(line), okPrefix)
	if !taken {
		return answer{}, false, false
	}
	if v, taken = bytes.CutSuffix(v, []byte("}")); !taken {
		return answer{}, false, false
	}
	if v = bytes.TrimSpace(v); len(v) > 0 && !bytes.Equal(v, []byte("null")) && jsonscan.Valid(v) {
		return answer{OK: v}, true, true
	}
	return answer{}, true, false
}

// strictAnswer decodes an answer line by wire.Unmarshal, as one of three
// objects: {"ok": a value, not null}, {"error": words, not empty}, or
// {"error": words, "refused": true}.
func strictAnswer(line []byte) (answer, error) {
	var ok struct {
		OK json.RawMessage `json:"ok"` // null decodes as none
	}
	if wire.Unmarshal(line, &ok) == nil && ok.OK != nil {
		return answer{OK: ok.OK}, nil
	}
	var refused struct {
		Error string `json:"error"`
	}
	if wire.Unmarshal(line, &refused) == nil && refused.Error != "" {
		return answer{Error: refused.Error}, nil
	}
	var byRule struct {
		Error   string `json:"error"`
		Refused bool   `json:"refused"`
	}
	if wire.Unmarshal(line, &byRule) == nil && byRule.Error != "" && byRule.Refused {
		return answer{Error: byRule.Error, Refused: true}, nil
	}
	return answer{}, errBadAnswer
}

var okPrefix = []byte(`{"ok":`)

// ended says why the process failed a call: what it wrote on stderr.
func (p *proc) ended(ctx context.Context, err error) error {
	select {
	case <-p.done: // killed already: this waits for the exit status and the last of its stderr
	case <-time.After(30 * time.Second):
	}
	p.outFile.Close()
	if ctx.Err() != nil {
		return fmt.Errorf("the call was cancelled: %w", ctx.Err())
	}
	what := "ended"
	if !p.answered {
		what = "did not start"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, errNotSent) {
		err = nil
	}
	msg := "the file tool's sandbox " + what
	if st := p.cmd.ProcessState; st != nil {
		msg += " (" + st.String() + ")"
	}
	if err != nil {
		msg += ": " + err.Error()
	}
	if said := strings.TrimSpace(p.tail.String()); said != "" {
		msg += "; it said: " + said
	}
	return errors.New(msg)
}

// kill ends the process and its process group.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.cmd.Process.Kill()
	}
}

// Close ends the session's process: its stdin closed, it has 5 seconds
// to end, then it is killed; it is always waited for.
func (s *Sandboxed) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	s.p = nil
	if p == nil {
		return nil
	}
	p.in.Close()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.kill()
		<-p.done
	}
	return p.outFile.Close()
}

// tail keeps the last stderrKept bytes written, copying each write on.
type tail struct {
	mu   sync.Mutex
	buf  []byte
	copy io.Writer
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.copy != nil {
		t.copy.Write(b)
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > stderrKept {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-stderrKept:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "?")
}
