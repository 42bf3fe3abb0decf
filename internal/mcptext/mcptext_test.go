package mcptext

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolrefusal"
)

// TestTextResultIsTheGoSDKs: a Result is encoded to the go-sdk's own
// bytes for the same result, an error or not, whatever its text holds.
func TestTextResultIsTheGoSDKs(t *testing.T) {
	for _, text := range []string{"", `{"ok":"a\nb"}`, "<&> \u2028\u2029 \"\\ \t\x01 \xff é 😀"} {
		for _, isErr := range []bool{false, true} {
			for _, meta := range []mcp.Meta{nil, toolrefusal.Meta(text)} {
				r := &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
				want, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.Marshal(Result{r})
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%q %v %v: encoded %s (%v)\nthe go-sdk encodes %s", text, isErr, meta, got, err, want)
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
