package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/stdpipe"
)

// maxMessage is the longest message line taken from the client: the
// go-sdk's own stdio cap (lowered by tests).
var maxMessage = mcp.DefaultMaxLineLength

// errBatch is a JSON-RPC batch, which the protocol dropped in 2025-06-18
// and this server never takes.
var errBatch = errors.New("a JSON-RPC batch is not taken: one message a line")

// Stdio is the MCP transport of this process's stdin and stdout: Link's
// own where both are pipes or sockets ([stdpipe.Std]), else the go-sdk's.
func Stdio() mcp.Transport {
	return New(stdpipe.Std(os.Stdin), stdpipe.Std(os.Stdout))
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
	r, w *stdpipe.Pipe
	take Taker // nil: every message goes to the go-sdk
}

// Taker answers some messages itself, on the connection, before the
// go-sdk server sees them. Take is offered each line (trimmed, not a
// batch) from the one goroutine that reads, and says whether it took it;
// a line it does not take is decoded and given to the go-sdk, and Saw is
// told of it. Close is called once as the connection closes, between
// closing its input and its output: it answers what it took first.
type Taker interface {
	Take(c *Conn, line []byte) bool
	Saw(msg jsonrpc.Message)
	Close()
}

// SetTaker hands the lines of the sessions connected after it to tk.
func (t *Transport) SetTaker(tk Taker) { t.take = tk }

// Connect makes the session's connection.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	return &Conn{in: t.r, out: t.w, br: bufio.NewReaderSize(t.r, 64<<10), take: t.take}, nil
}

// Conn is one session's connection. Its reads come from one goroutine
// (the go-sdk's reader); its writes from any, one at a time (mu).
type Conn struct {
	in  *stdpipe.Pipe
	br  *bufio.Reader
	out *stdpipe.Pipe

	take Taker // or nil

	mu   sync.Mutex
	wbuf []byte // reused for each message written

	closeOnce sync.Once
}

func (c *Conn) SessionID() string { return "" }

// Read is the next message: a line, without blank lines, at most
// maxMessage bytes; a batch, or a line that is not one message, ends
// the session (as the go-sdk's own transport does). A line the [Taker]
// takes is not returned.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '[' {
			return nil, errBatch
		}
		if c.take == nil {
			return jsonrpc.DecodeMessage(line)
		}
		if c.take.Take(c, line) {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err == nil {
			c.take.Saw(msg)
		}
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
		return err
	}
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

// WriteResult writes a successful response to id: result, encoded.
func (c *Conn) WriteResult(id jsonrpc.ID, result []byte) error {
	return c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: result})
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
		var q bytes.Buffer // as the go-sdk writes it: no HTML escaping
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		if enc.Encode(id) != nil {
			return b, false
		}
		b = append(b, bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
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
		if c.take != nil {
			c.take.Close()
		}
		err = errors.Join(err, c.out.Close())
	})
	return err
}
