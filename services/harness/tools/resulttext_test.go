package tools

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultText: a call's answer made text: one text as it is (not
// copied), several joined by a line, other kinds named, and an answer
// with no words, an empty text among them, given as its structured
// content.
func TestResultText(t *testing.T) {
	for _, c := range []struct {
		name string
		r    *mcp.CallToolResult
		want string
	}{
		{"one text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a page"}}}, "a page"},
		{"two texts", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{"an image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("xyz")}}}, "[an image, image/png, 3 bytes]"},
		{"structured", &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, `{"n":1}`},
		{"an empty text and structured", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{}}, StructuredContent: map[string]any{"n": 1}}, `{"n":1}`},
		{"an empty text alone", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{}}}, ""},
	} {
		if got := resultText(c.r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
