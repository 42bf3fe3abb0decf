package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcptext"
	"lnk.dev/lnk/internal/stdpipe"
)

// maxMessage is the longest message line taken from the client: the
// go-sdk's own stdio cap (lowered by tests).
var maxMessage = mcp.DefaultMaxLineLength

// errBatch is a JSON-RPC batch, which the protocol dropped in 2025-06-18
// and this server never takes.
var errBatch = errors.New("a JSON-RPC batch is not taken: one message a line")

// outPipe is the size stdout's pipe is grown to: a 100 KB page's answer,
// or a large file's, goes in one write, which then never waits for the
// client to drain the default 64 KiB before the rest can follow. Not
// larger: every grown pipe counts against the user's
// pipe-user-pages-soft (64 MiB by default), past which the kernel gives
// each new pipe of the user's, any program's, the least room it gives; at
// 256 KiB that takes 256 tool servers running at once.
const outPipe = 256 << 10

// Stdio is the MCP transport of this process's stdin and stdout: Link's
// own where both are pipes or sockets ([stdpipe.Std]), else the go-sdk's.
// A pipe on stdout is grown to outPipe where the kernel lets it; where it
// does not, that is said once on stderr and the pipe serves as it is (its
// size is no one's power, only how many writes an answer takes). The
// grown pipe counts 64 pages against the user's pipe-user-pages-soft.
func Stdio() mcp.Transport {
	in, out := stdpipe.Std(os.Stdin), stdpipe.Std(os.Stdout)
	if p, ok := out.(*stdpipe.Pipe); ok {
		if _, err := p.Grow(outPipe); err != nil && !errors.Is(err, stdpipe.ErrNotPipe) {
			fmt.Fprintf(os.Stderr, "%s: stdout's pipe left at its size, each large answer written in parts: %v\n", filepath.Base(os.Args[0]), err)
		}
	}
	return New(in, out)
}

// New is the MCP stdio transport over in and out: a [*Transport] where
// both are [stdpipe.Pipe]s, else (a terminal, a file) the go-sdk's
// [mcp.IOTransport].
func New(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	r, rok := in.(*stdpipe.Pipe)
	w, wok := out.(*stdpipe.Pipe)
	if !rok || !wok {
		return &mcp.IOTransport{Reader: in, Writer: out}
	}
	return &Transport{r: r, w: w}
}

// Transport is Link's stdio transport over two [stdpipe.Pipe]s.
type Transport struct {
	r, w  *stdpipe.Pipe
	fast  *Tools // nil: every message goes to the go-sdk
	calls int    // the gate's calls at once; 0: no gate
}

// SetFast has the sessions connected after it answer a plain tools/call
// of tools on the fast path ([fastCalls]).
func (t *Transport) SetFast(tools Tools) { t.fast = &tools }

// SetMaxCalls has the sessions connected after it read no message while
// calls tools/call requests, the fast path's and the go-sdk's, are read
// and unanswered ([gate]).
func (t *Transport) SetMaxCalls(calls int) { t.calls = calls }

// Connect makes the session's connection.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &Conn{in: t.r, out: t.w, br: bufio.NewReaderSize(t.r, 64<<10), gate: newGate(t.calls)}
	if t.fast != nil {
		c.fast = newFastCalls(*t.fast)
	}
	return c, nil
}

// Conn is one session's connection. Its reads come from one goroutine
// (the go-sdk's reader); its writes from any, one at a time (mu).
type Conn struct {
	in  *stdpipe.Pipe
	br  *bufio.Reader
	out *stdpipe.Pipe

	fast *fastCalls // or nil
	gate *gate      // or nil

	mu   sync.Mutex
	wbuf []byte // reused for each message written

	closeOnce sync.Once
}

func (c *Conn) SessionID() string { return "" }

// Read is the next message: a line, without blank lines, at most
// maxMessage bytes; a batch, or a line that is not one message, ends
// the session (as the go-sdk's own transport does). A line the fast
// path takes is not returned. Under a gate, no line is read while its
// calls are unanswered.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.gate.enter(ctx); err != nil {
			return nil, err
		}
		line, err := c.readLine()
		if err != nil {
			c.gate.leave()
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			c.gate.leave()
			continue
		}
		if line[0] == '[' {
			c.gate.leave()
			return nil, errBatch
		}
		if c.fast != nil && c.fast.take(c, line) {
			continue // its slot is given back once it is answered
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err == nil && c.fast != nil {
			c.fast.saw(msg)
		}
		c.gate.handed(msg, err)
		return msg, err
	}
}

// readLine reads one line into a slice of its own (a request's params
// may still be read after the next line is).
func (c *Conn) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := c.br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxMessage {
			return nil, fmt.Errorf("a message past %d MiB", maxMessage>>20)
		}
		buf = append(buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(bytes.TrimSpace(buf)) > 0:
			return buf, nil // a last line without its newline
		case err != nil:
			return nil, err
		}
		return buf, nil
	}
}

// Write writes msg as one line, in one write. A response's result, which
// the server encoded already (compact: no newline in it), is framed as
// it is; anything else is encoded by the go-sdk.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		c.gate.answered(msg) // unwritten, but no longer the go-sdk's to answer
		return err
	}
	return c.write(msg, false)
}

// write writes msg, from the fast path or the go-sdk, and gives back the
// gate's slot of the call it answers.
func (c *Conn) write(msg jsonrpc.Message, fast bool) error {
	err := c.writeLine(msg)
	if fast {
		c.gate.leave()
	} else {
		c.gate.answered(msg)
	}
	return err
}

func (c *Conn) writeLine(msg jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := appendResponse(c.wbuf[:0], msg)
	if !ok {
		enc, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		b = append(c.wbuf[:0], enc...)
	}
	b = append(b, '\n')
	_, err := c.out.Write(b)
	if cap(b) <= 1<<20 {
		c.wbuf = b // keep a buffer a call's size; let a large one go
	} else {
		c.wbuf = nil
	}
	return err
}

// appendResponse appends a successful response with an integer or string
// id, framed around its encoded result: what [jsonrpc.EncodeMessage]
// writes for it, without encoding the result again. ok is false for
// any other message.
func appendResponse(b []byte, msg jsonrpc.Message) ([]byte, bool) {
	r, isResp := msg.(*jsonrpc.Response)
	if !isResp || r.Error != nil || len(r.Result) == 0 || bytes.IndexByte(r.Result, '\n') >= 0 {
		return b, false
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	switch id := r.ID.Raw().(type) {
	case int64:
		b = strconv.AppendInt(b, id, 10)
	case string:
		b = mcptext.AppendString(b, id) // as the go-sdk writes it: no HTML escaping
	default:
		return b, false
	}
	b = append(b, `,"result":`...)
	b = append(b, r.Result...)
	return append(b, '}'), true
}

// Close closes both ends; a read waiting in the poller returns. Like
// the go-sdk's own connection, it lets the calls in flight answer first.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		err = c.in.Close()
		if c.fast != nil {
			c.fast.close()
		}
		err = errors.Join(err, c.out.Close())
	})
	return err
}
