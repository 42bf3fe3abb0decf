package mcpstdio

import (
	"bytes"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// fileToolNames are the file tool's tools, as its fast path is handed
// them (find last); FuzzPlainCall's seeds were written for them.
var fileToolNames = []string{"read", "write", "replace", "list", "find"}

// TestPlainCall: the lines the fast path takes, and the near misses it
// leaves to the go-sdk.
func TestPlainCall(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a"}}}`:       true,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"list"}}`:                              true,
		`{"params":{"arguments":{},"name":"list"},"method":"tools/call","id":-9007199254740992,"jsonrpc":"2.0"}`: true,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find"}}`:                                false, // not offered
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","_meta":{}}}`:                     false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read"},"x":1}`:                          false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call"}`:                                                         false,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read"}}`:                                       false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"name":"read"}}`:                                false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read"}} {}`:                             false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read"}`:                                 false,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"read"}}`:                 false,
		`{"jsonrpc":"2.0","id":01,"method":"tools/call","params":{"name":"read"}}`:                               false,
		`{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"read"}}`:                         false,
		`{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"read"}}`:                             false,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"read"}}`:                             false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{},"arguments":{}}}`:  false,
	} {
		names := fileToolNames[:len(fileToolNames)-1] // find not offered
		id, name, args, got := plainCall([]byte(line), names)
		if got != want {
			t.Errorf("%s: taken %v, want %v", line, got, want)
		}
		if cid, cname, cargs, ok := compactCall([]byte(line), names); ok && (cid != id || cname != name || !bytes.Equal(cargs, args)) {
			t.Errorf("%s: read as %v %s %s, decoded as %v %s %s", line, cid.Raw(), cname, cargs, id.Raw(), name, args)
		}
	}
}

// FuzzPlainCall: a line the fast path takes is one the go-sdk decodes to
// the same call: the same id, a tools/call, the same name and arguments.
// The fast path never refuses: a line it does not take is the go-sdk's,
// so the two answer every line alike. Its seeds (testdata) hold keys
// twice, in another case, unknown, null and escaped; the arguments pass
// on as they are, to apply's strict decoder (apply's FuzzDecodeCall and
// TestArgumentsAreStrict).
func FuzzPlainCall(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"list"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"path":"a"},"name":"read"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		id, name, args, ok := plainCall(line, fileToolNames)
		if !ok {
			return
		}
		msg, err := decodeWithSDK(line)
		if err != nil {
			t.Fatalf("taken, but the go-sdk refuses it: %v", err)
		}
		if msg.ID != id || msg.Method != "tools/call" {
			t.Fatalf("taken as id %v, the go-sdk reads %v %s", id.Raw(), msg.ID.Raw(), msg.Method)
		}
		var p mcp.CallToolParamsRaw
		if err := sdkUnmarshal(msg.Params, &p); err != nil || p.Name != name || !bytes.Equal(p.Arguments, args) || p.Meta != nil {
			t.Fatalf("taken as %s %s, the go-sdk reads %s %s (%v)", name, args, p.Name, p.Arguments, err)
		}
	})
}

// decodeWithSDK is line as the go-sdk decodes it, a request.
func decodeWithSDK(line []byte) (*jsonrpc.Request, error) {
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, err
	}
	r, ok := m.(*jsonrpc.Request)
	if !ok {
		return nil, errors.New("not a request")
	}
	return r, nil
}

// sdkUnmarshal decodes as the go-sdk's own decoder does (its
// internal/json: segmentio's, field names matched by case).
func sdkUnmarshal(b []byte, v any) error {
	d := segjson.NewDecoder(bytes.NewReader(b))
	d.DontMatchCaseInsensitiveStructFields()
	return d.Decode(v)
}
