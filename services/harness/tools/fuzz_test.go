package tools

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"lnk.dev/lnk/internal/toolname"
)

// FuzzOffers feeds a tool's list page, as a tool sends it, to the offers:
// whatever it holds, every offer has a name a provider takes (at most 64,
// letters, digits, - and _, the tool's name and "__" first), no two share
// a name, a description of at most 2 KiB of valid UTF-8, a JSON object
// schema of at most 16 KiB, at most 128 of them, 128 KiB in all.
func FuzzOffers(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"read","description":"reads","inputSchema":{"type":"object"}}]}`))
	f.Add([]byte(`{"tools":[{"name":"a.b"},{"name":"a"},{"name":"a"},{"name":"","inputSchema":[1]}]}`))
	f.Add([]byte(`{"tools":[{"name":"x","description":"\u001b[31m\u0000","inputSchema":"str"}],"nextCursor":"c"}`))
	f.Fuzz(func(t *testing.T, page []byte) {
		var res mcp.ListToolsResult
		if json.Unmarshal(page, &res) != nil {
			return
		}
		offers := capTotal(toolOffers("tool", res.Tools, func(string, ...any) {}), func(string, ...any) {})
		if len(offers) > MaxCalls {
			t.Fatalf("%d offers", len(offers))
		}
		seen := map[string]bool{}
		total := 0
		for _, o := range offers {
			if len(o.Name) > MaxName || !toolname.ProviderChars(o.Name) || o.Name[:len("tool__")] != "tool__" || seen[o.Name] {
				t.Fatalf("name %q", o.Name)
			}
			seen[o.Name] = true
			if len(o.Description) > MaxDescription || !utf8.ValidString(o.Description) {
				t.Fatalf("description of %d bytes", len(o.Description))
			}
			var obj map[string]any
			if len(o.Schema) > MaxSchema || json.Unmarshal(o.Schema, &obj) != nil {
				t.Fatalf("schema %.100s", o.Schema)
			}
			total += o.size()
		}
		if total > MaxOffers {
			t.Fatalf("%d bytes in all", total)
		}
	})
}

// FuzzArguments feeds a call's arguments, as the model wrote them: what
// goes to the tool is always one JSON object, or nothing is called.
func FuzzArguments(f *testing.F) {
	f.Add([]byte(`{"argv":["ls"]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(` [1] `))
	f.Add([]byte(`{"a":1}{"b":2}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := arguments(raw)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(out, &obj) != nil || obj == nil {
			t.Fatalf("%q went to the tool as %q", raw, out)
		}
	})
}
