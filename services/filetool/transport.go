package filetool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/filetool/stdpipe"
)

// maxMessage is the longest message line taken from the client: the
// go-sdk's own stdio cap (lowered by tests).
var maxMessage = mcp.DefaultMaxLineLength

// errBatch is a JSON-RPC batch, which the protocol dropped in 2025-06-18
// and this server never takes.
var errBatch = errors.New("a JSON-RPC batch is not taken: one message a line")

// StdioTransport is the MCP stdio transport over in and out: one JSON-RPC
// message a line each way, as the protocol says, read and written by
// Link's own code rather than the go-sdk's [mcp.IOTransport], for speed
// (see the package doc's # Speed). A message is decoded once, by the
// go-sdk's own decoder ([jsonrpc.DecodeMessage]); a result the server
// encoded already is written as it is, framed, not encoded again; each
// message is one write. Where in or out is not a [stdpipe.Pipe] (a terminal, a
// file), it is the go-sdk's [mcp.IOTransport].
func StdioTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	r, rok := in.(*stdpipe.Pipe)
	w, wok := out.(*stdpipe.Pipe)
	if !rok || !wok {
		return &mcp.IOTransport{Reader: in, Writer: out}
	}
	return &lineTransport{r: r, w: w}
}

type lineTransport struct {
	r, w *stdpipe.Pipe
	fast *fastCalls // set by Serve; nil: every message goes to the go-sdk
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	return &lineConn{in: t.r, out: t.w, br: bufio.NewReaderSize(t.r, 64<<10), fast: t.fast}, nil
}

// lineConn is one session's connection. Its reads come from one goroutine
// (the go-sdk's reader); its writes from any, one at a time (mu).
type lineConn struct {
	in  *stdpipe.Pipe
	br  *bufio.Reader
	out *stdpipe.Pipe

	fast *fastCalls // or nil

	mu   sync.Mutex
	wbuf []byte // reused for each message written

	closeOnce sync.Once
}

func (c *lineConn) SessionID() string { return "" }

// Read is the next message: a line, without blank lines, at most
// maxMessage bytes; a batch, or a line that is not one message, ends
// the session (as the go-sdk's own transport does). A plain tools/call
// is answered by the fast path ([fastCalls]) instead, where there is one.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
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
		if c.fast == nil {
			return jsonrpc.DecodeMessage(line)
		}
		if c.fast.take(c, line) {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err == nil {
			c.fast.saw(msg)
		}
		return msg, err
	}
}

// readLine reads one line into a slice of its own (a request's params
// may still be read after the next line is).
func (c *lineConn) readLine() ([]byte, error) {
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
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
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

// writeResult writes a successful response to id: result, encoded.
func (c *lineConn) writeResult(id jsonrpc.ID, result []byte) error {
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
func (c *lineConn) Close() error {
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
