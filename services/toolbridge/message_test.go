package toolbridge

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseMessage: what parseMessage accepts is one valid JSON-RPC
// message, read as encoding/json reads it into a message (each member
// the same, in any case, the last one winning), and what it refuses for
// its members json.Unmarshal refuses too.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		initBody,
		echoCall,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"ID":2,"Method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","jsonrpc":null,"id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","method":1,"method":"x","id":1}`,
		`{"\u006aſonrpc":"2.0","\u0069d":"\u00e9","method":"t\u00e9\\/x","params":[1]}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xffb\"}",
		` {"jsonrpc":"2.0","id":1,"method":"x"} {}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"result":{"a":[]},"error":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		trimmed := bytes.TrimSpace(b)
		if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
			got, gerr := readMessage(trimmed)
			var want message
			werr := json.Unmarshal(trimmed, &want)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%q: read %v, encoding/json %v", b, gerr, werr)
			}
			if gerr == nil && (got.JSONRPC != want.JSONRPC || got.Method != want.Method || !bytes.Equal(got.ID, want.ID) ||
				!bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) || !bytes.Equal(got.Error, want.Error)) {
				t.Fatalf("%q: read %+v, encoding/json %+v", b, *got, want)
			}
		}
		if err != nil {
			return
		}
		if m.JSONRPC != "2.0" || (m.Method == "" && !hasID(m.ID)) {
			t.Fatalf("accepted %q", b)
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if m.isRequest() && m.isNotification() {
			t.Fatal("both a request and a notification")
		}
	})
}
