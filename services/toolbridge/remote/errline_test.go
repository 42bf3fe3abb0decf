package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAServersErrorTextIsAnsweredAsValidJSON: a server's refusal whose
// text holds control bytes, invalid UTF-8, quotes and a line break still
// answers the request with one valid JSON-RPC error line carrying its
// id: the text is the server's, and a line the bridge cannot parse would
// leave the call unanswered. The positive control: a refusal of plain
// text is answered the same way, its text kept.
func TestAServersErrorTextIsAnsweredAsValidJSON(t *testing.T) {
	for _, text := range []string{"plain refusal", "bad\x01\x7f\xff\"}\n{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(text))
		}))
		c, err := FromEnv(ts.URL+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := c.Run(context.Background(), strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		ts.Close()
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 1 {
			t.Fatalf("%q: %d lines written: %q", text, len(lines), out.String())
		}
		var m struct {
			ID    int `json:"id"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m.ID != 7 || !strings.Contains(m.Error.Message, "502") {
			t.Fatalf("%q: the answer %q is not an error for id 7: %v", text, lines[0], err)
		}
		if text == "plain refusal" && !strings.Contains(m.Error.Message, text) {
			t.Fatalf("the server's text was lost: %q", m.Error.Message)
		}
	}
}
