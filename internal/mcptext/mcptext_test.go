package mcptext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolrefusal"
)

// TestTextResultIsTheGoSDKs: a Result is encoded to the go-sdk's own
// bytes for the same result with its HTML escapes (\u003c, \u003e,
// \u0026) written as the characters, and decodes to the same result, an
// error or not, whatever its text holds; no HTML escape is left in it.
func TestTextResultIsTheGoSDKs(t *testing.T) {
	unescape := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&") // none of the texts holds a backslash before a u
	for _, text := range []string{"", `{"ok":"a\nb"}`, "<&> \u2028\u2029 \"\\ \t\x01 \xff é 😀", "<p>a &amp; b</p>"} {
		for _, isErr := range []bool{false, true} {
			for _, meta := range []mcp.Meta{nil, toolrefusal.Meta(text)} {
				r := &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
				sdk, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Result{r}.MarshalJSON()
				if want := unescape.Replace(string(sdk)); err != nil || string(got) != want {
					t.Errorf("%q %v %v: encoded %s (%v)\nthe go-sdk's, HTML unescaped: %s", text, isErr, meta, got, err, want)
				}
				if bytes.Contains(got, []byte(`\u003c`)) || bytes.Contains(got, []byte(`\u0026`)) {
					t.Errorf("%q: an HTML escape left in %s", text, got)
				}
				var a, b mcp.CallToolResult
				if err := json.Unmarshal(got, &a); err != nil {
					t.Fatalf("%s does not decode: %v", got, err)
				}
				if err := json.Unmarshal(sdk, &b); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%q: decodes to %+v, the go-sdk's to %+v", text, a, b)
				}
			}
		}
	}
}

// TestPlain: only a result of one plain text is taken, and only in a
// session whose protocol has no resultType.
func TestPlain(t *testing.T) {
	text := func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	}
	withMeta := text()
	withMeta.Meta = mcp.Meta{"a": 1}
	annotated := text()
	annotated.Content[0].(*mcp.TextContent).Annotations = &mcp.Annotations{Priority: 1}
	structured := text()
	structured.StructuredContent = map[string]any{"a": 1}
	two := text()
	two.Content = append(two.Content, &mcp.TextContent{Text: "y"})
	for name, r := range map[string]*mcp.CallToolResult{"meta": withMeta, "annotated": annotated, "structured": structured, "two texts": two,
		"an image": {Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}} {
		if Plain(r, nil) {
			t.Errorf("%s: taken as plain text", name)
		}
	}
	if Plain(text(), nil) {
		t.Error("a result of no session taken as plain text")
	}
}
