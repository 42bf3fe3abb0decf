package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/stdpipe"
)

// stdioPipes is a New transport over two pipes, with the client's ends
// (it writes to inChild, reads from outChild), which the caller closes.
func stdioPipes(t testing.TB) (tr mcp.Transport, inChild, outChild *os.File) {
	t.Helper()
	inChild, inP, err := stdpipe.ForChild(false)
	if err != nil {
		t.Fatal(err)
	}
	outChild, outP, err := stdpipe.ForChild(true)
	if err != nil {
		t.Fatal(err)
	}
	return New(inP, outP), inChild, outChild
}

// stdioConn is a Transport's connection over two pipes, with the
// client's ends: it writes to in, reads from out.
func stdioConn(t testing.TB) (c mcp.Connection, in *os.File, out *bufio.Reader) {
	t.Helper()
	tr, inChild, outChild := stdioPipes(t)
	if _, ok := tr.(*Transport); !ok {
		t.Fatalf("pipes got %T, not Link's transport", tr)
	}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); inChild.Close(); outChild.Close() })
	return c, inChild, bufio.NewReader(outChild)
}

// TestStdioTransportWrites: each message is one line, in the bytes the
// go-sdk's own encoder writes for it — a result framed as it is, with an
// integer or string id, and every other message encoded.
func TestStdioTransportWrites(t *testing.T) {
	c, _, out := stdioConn(t)
	result := json.RawMessage(`{"content":[{"type":"text","text":"a\nb <&> \u2028"}]}`)
	str, _ := jsonrpc.MakeID(`x"<y>\u0001`)
	num, _ := jsonrpc.MakeID(float64(1 << 40))
	req, _ := jsonrpc.MakeID(float64(3))
	msgs := []jsonrpc.Message{
		&jsonrpc.Response{ID: num, Result: result},
		&jsonrpc.Response{ID: str, Result: result},
		&jsonrpc.Response{ID: num, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no"}},
		&jsonrpc.Request{ID: req, Method: "ping"},
		&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`)},
	}
	for _, m := range msgs {
		if err := c.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.TrimSuffix(line, []byte("\n")); !bytes.Equal(got, want) {
			t.Errorf("wrote %s\nthe go-sdk writes %s", got, want)
		}
	}
}

// TestStdioTransportReads: a message a line (a blank line passed over,
// CRLF taken, the last line without its newline taken); a batch, a line
// that is not JSON, and a line past the cap each end the session, as
// the go-sdk's own transport does; Close ends a read waiting.
func TestStdioTransportReads(t *testing.T) {
	ctx := context.Background()
	c, in, _ := stdioConn(t)
	in.WriteString("\n  \r\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	in.Close() // the last line, without its newline, is read at the end
	for _, want := range []string{"ping", "notifications/initialized"} {
		if m, err := c.Read(ctx); err != nil || m.(*jsonrpc.Request).Method != want {
			t.Fatalf("read %v %v, want %s", m, err, want)
		}
	}
	if _, err := c.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the client ended: %v", err)
	}

	defer func(m int) { maxMessage = m }(maxMessage)
	maxMessage = 1 << 20
	for name, line := range map[string]string{
		"batch":    `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"not JSON": `{"jsonrpc":"2.0",`,
		"too long": `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", maxMessage) + `"}`,
	} {
		c, in, _ := stdioConn(t)
		go func() { in.WriteString(line + "\n"); in.Close() }()
		m, err := c.Read(ctx)
		switch {
		case err == nil:
			t.Errorf("%s: read %v", name, m)
		case name == "batch" && !errors.Is(err, errBatch), name == "too long" && !strings.Contains(err.Error(), "a message past 1 MiB"):
			t.Errorf("%s: %v", name, err)
		}
	}

	c, _, _ = stdioConn(t)
	done := make(chan error, 1)
	go func() { _, err := c.Read(ctx); done <- err }()
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a read under Close read a message")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end the read waiting")
	}
}

// TestStdioTransportElsewhere: a terminal or file on stdin or stdout
// gets the go-sdk's own transport.
func TestStdioTransportElsewhere(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := New(f, f).(*mcp.IOTransport); !ok {
		t.Fatal("a file got Link's transport")
	}
}

// FuzzAppendResponse: for any message a client line decodes to, the
// framing Write uses for a response is one line, valid JSON, and once
// compacted (the server's results are) what the go-sdk would write.
func FuzzAppendResponse(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a<b","result":{"x": [1, 2]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return
		}
		got, ok := appendResponse(nil, m)
		if !ok {
			return
		}
		want, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatalf("the go-sdk cannot encode what appendResponse framed: %v", err)
		}
		var compact bytes.Buffer
		if bytes.IndexByte(got, '\n') >= 0 || json.Compact(&compact, got) != nil || !bytes.Equal(compact.Bytes(), want) {
			t.Fatalf("framed %s\nthe go-sdk writes %s", got, want)
		}
	})
}

// FuzzRead: whatever a client writes, Read gives the messages the
// go-sdk's decoder makes of its lines, in order, or ends the session
// with an error; it never panics and never gives a message the go-sdk
// would not have.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\r\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		c, in, _ := stdioConn(t)
		go func() { in.Write(b); in.Close() }()
		for {
			msg, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("a message the go-sdk cannot encode again: %v", err)
			}
		}
	})
}
