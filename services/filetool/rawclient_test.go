package filetool_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// rawClient is a minimal MCP client: newline-delimited JSON-RPC 2.0 on
// serve's stdin and stdout (the stdio transport), doing initialize, then
// notifications/initialized, then tools/call, as the protocol says, and
// checking each response's jsonrpc, id and result — without the go-sdk
// client's own machinery (its goroutines, channels and reflection), so a
// benchmark timed with it measures Link's side of a call.
//
// It is our measuring client, not an agent's, and it waits as cheaply as
// a client can: its ends of serve's pipes are blocking, each response
// read with a plain read(2) on the caller's thread (which the benchmark
// locks to its goroutine), never through the runtime's poller, so a
// response wakes the very thread waiting for it. Through the poller the
// same wait took an epoll_wait and an EAGAIN read more and a wake-up of
// the poller's thread: measured A/B on the same binaries, 3.2 → 2.1 of
// the test process's context switches a call and about a sixth less of
// its CPU (client-cpu-ns/op).
type rawClient struct {
	in  io.WriteCloser
	out *bufio.Reader
	id  int64
	buf []byte
}

// rawProtocol is the protocol version the raw client asks for.
const rawProtocol = "2025-06-18"

// connectRaw starts `lnk-file-tool serve flags -- command...` and
// initializes an MCP session with the raw client; both end with the test.
func connectRaw(t testing.TB, flags []string, command ...string) (*rawClient, *exec.Cmd) {
	t.Helper()
	return connectRawAt(t, rawProtocol, flags, command...)
}

// connectRawAt is connectRaw asking for protocol version; with version
// "" it does not initialize (for sessionless calls).
func connectRawAt(t testing.TB, version string, flags []string, command ...string) (*rawClient, *exec.Cmd) {
	t.Helper()
	args := append(append([]string{"serve"}, flags...), "--")
	cmd := exec.Command(testenv.Bin(t, "lnk-file-tool"), append(args, command...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close() // the end of the session: serve ends its sandbox and exits
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Fd makes each pipe blocking: read and written with plain read(2)
	// and write(2), never the runtime's poller (see rawClient).
	out.(*os.File).Fd()
	in.(*os.File).Fd()
	c := &rawClient{in: in, out: bufio.NewReaderSize(out, 64<<10)}
	if version == "" {
		return c, cmd
	}
	res, err := c.request("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "lnk-raw-client", "version": "1"},
	})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &init); err != nil || init.ProtocolVersion != version || init.ServerInfo.Name != "lnk-file-tool" {
		t.Fatalf("initialize answered %s (%v)", res, err)
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	return c, cmd
}

// send writes one message, one line.
func (c *rawClient) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.buf = append(append(c.buf[:0], b...), '\n')
	_, err = c.in.Write(c.buf)
	return err
}

type rawRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// rawResponse is a response line, its result decoded as R: in the same
// pass as the rest of the line.
type rawResponse[R any] struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  *R              `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// request sends a request and reads lines until its response, passing
// over notifications; a request from the server, or a response to
// another id, is an error.
func (c *rawClient) request(method string, params any) (json.RawMessage, error) {
	res, err := requestAs[json.RawMessage](c, method, params)
	if err != nil {
		return nil, err
	}
	return *res, nil
}

// requestAs is request with the result decoded as R, each line decoded
// once, as a client that knows what it asked would.
func requestAs[R any](c *rawClient, method string, params any) (*R, error) {
	c.id++
	if err := c.send(rawRequest{"2.0", c.id, method, params}); err != nil {
		return nil, err
	}
	want := strconv.FormatInt(c.id, 10)
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("no response to %s: %v", method, err)
		}
		var r rawResponse[R]
		if err := json.Unmarshal(line, &r); err != nil || r.JSONRPC != "2.0" {
			return nil, fmt.Errorf("not a JSON-RPC message: %q", line)
		}
		switch {
		case r.Method != "" && r.ID == nil:
			continue // a notification
		case r.Method != "":
			return nil, fmt.Errorf("a request from the server the raw client does not answer: %s", r.Method)
		case string(bytes.TrimSpace(r.ID)) != want:
			return nil, fmt.Errorf("a response to id %s, waiting for %s", r.ID, want)
		case r.Error != nil:
			return nil, fmt.Errorf("%s: error %d: %s", method, r.Error.Code, r.Error.Message)
		case r.Result == nil:
			return nil, fmt.Errorf("%s: a response with neither result nor error", method)
		}
		return r.Result, nil
	}
}

// toolResult is a tools/call result as the raw client reads it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// callTool calls a tool and returns its text and whether it was an error.
func (c *rawClient) callTool(name string, args json.RawMessage) (string, bool, error) {
	r, err := requestAs[toolResult](c, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", false, err
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return "", false, errors.New("a tool's result that is not one text")
	}
	return r.Content[0].Text, r.IsError, nil
}

// TestRawClient: serve speaks the stdio transport as the protocol says
// to a client that is not the go-sdk's: initialize, tools/call, a
// refusal as a tool error.
func TestRawClient(t *testing.T) {
	f := newFolders(t)
	os.WriteFile(f.files+"/a.txt", []byte("one\n"), 0o600)
	c, _ := connectRaw(t, nil, testenv.Bin(t, "lnk-file-tool"), "apply", "--files", f.files, "--write", "work")
	text, isErr, err := c.callTool("read", json.RawMessage(`{"path":"a.txt"}`))
	var r map[string]any
	if err != nil || isErr || json.Unmarshal([]byte(text), &r) != nil || r["text"] != "one\n" {
		t.Fatalf("read: %v %v %q", err, isErr, text)
	}
	text, isErr, err = c.callTool("write", json.RawMessage(`{"path":"b.txt","content":"x"}`))
	if err != nil || !isErr || text == "" {
		t.Fatalf("a write outside --write: %v %v %q", err, isErr, text)
	}
}

// TestResultOnTheWire: a tool's result is, byte for byte, the go-sdk's
// own encoding of it — in a session of a protocol with no resultType
// (which serve encodes in one pass, mcptext.Result) and in a sessionless
// call of the protocol that has one (which it leaves to the go-sdk).
func TestResultOnTheWire(t *testing.T) {
	f := newFolders(t)
	os.WriteFile(f.files+"/a.txt", []byte("<one> & \"two\"\n"), 0o600)
	apply := []string{testenv.Bin(t, "lnk-file-tool"), "apply", "--files", f.files}
	sessionless := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "lnk-raw-client", "version": "1"},
	}
	old, _ := connectRawAt(t, "2025-03-26", nil, apply...)
	c, _ := connectRaw(t, nil, apply...)
	none, _ := connectRawAt(t, "", nil, apply...)
	for _, tc := range []struct {
		name string
		c    *rawClient
		meta map[string]any
	}{{"2025-03-26", old, nil}, {rawProtocol, c, nil}, {"2026-07-28 in a session of 2025-06-18", c, sessionless}, {"2026-07-28", none, sessionless}} {
		for _, args := range []string{`{"path":"a.txt"}`, `{"path":"../a.txt"}`} {
			params := map[string]any{"name": "read", "arguments": json.RawMessage(args)}
			if tc.meta != nil {
				params["_meta"] = tc.meta
			}
			res, err := tc.c.request("tools/call", params)
			if err != nil {
				t.Fatal(err)
			}
			var r mcp.CallToolResult
			if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
				t.Fatalf("%s: %s (%v)", tc.name, res, err)
			}
			want, _ := json.Marshal(&r) // the go-sdk's own encoding, with its resultType where the protocol has one
			if !bytes.Equal(res, want) {
				t.Errorf("%s %s: the wire has %s\nthe go-sdk encodes %s", tc.name, args, res, want)
			}
			if got := bytes.Contains(res, []byte(`"resultType":"complete"`)); got != (tc.c == none) {
				t.Errorf("%s: resultType on the wire: %v: %s", tc.name, got, res)
			}
		}
	}
}
