package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnswerOnTheWireIsTheGoSDKs: a fetch's answer, encoded in one pass
// (mcptext.OnePass), is written as the very bytes the go-sdk's own
// encoding of the same result gives but for its HTML escapes (\u003c,
// \u003e, \u0026: written as the characters, as mcptext says) — a
// page's markup characters, quotes, line breaks and non-ASCII text
// included — so a client reads the same answer.
func TestAnswerOnTheWireIsTheGoSDKs(t *testing.T) {
	body := "<!doctype html><html><head><title>Wire \"test\" & co</title></head><body><h1>Ünïcödé 😀</h1><p>a &lt;b&gt; \u2028 line\tand \\ back</p><pre>x\ny</pre></body></html>"
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		io.WriteString(rw, body)
	}))
	defer s.Close()
	tool, err := New(Config{PrivateHosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	c := newRawClient(t, tool)
	text, line := c.fetchLine(s.URL + "/")
	if !bytes.Contains([]byte(text), []byte("# Ünïcödé 😀")) || !bytes.Contains([]byte(text), []byte("Title: ` Wire \"test\" & co `")) {
		t.Fatalf("the answer:\n%s", text)
	}
	result, err := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := jsonrpc.MakeID(float64(c.id))
	want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
	if err != nil {
		t.Fatal(err)
	}
	// The body holds no backslash before a u: only the HTML escapes are undone.
	want = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(want)))
	if !bytes.Contains(want, []byte("& co")) {
		t.Fatalf("the answer holds no &: %s", want)
	}
	if got := bytes.TrimSuffix(line, []byte("\n")); !bytes.Equal(got, want) {
		t.Fatalf("on the wire:\n%s\nthe go-sdk encodes:\n%s", got, want)
	}
}
