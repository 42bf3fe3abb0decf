// Package mcptext encodes an MCP tool's result of one plain text — the
// result Link's own tool servers give (the file tool's serve, Link Web)
// — in one pass, to the go-sdk's own bytes but for HTML escaping. The
// go-sdk's encoding of a CallToolResult encodes its content, compacts it
// inside the result, and compacts the result again inside the response:
// a scan of every byte of the text each time, which for a large answer
// (a 100 KB page) is most of what the server spends on it.
//
// The text's <, > and & are written as they are, as the go-sdk's own
// JSON-RPC layer writes every value it encodes (its jsonMarshal: "like
// json.Marshal but without HTML escaping"); only its TextContent escapes
// them, as \u003c, \u003e and \u0026 — six bytes each, to be scanned
// and unescaped again by the client — a page's markup, or the text of an
// HTML page, being full of them. The JSON means the same string either
// way: HTML escaping is for JSON set inside an HTML page, which an MCP
// message never is. The text is written by [AppendString], encoding/json's
// bytes for a string (FuzzAppendString, a differential target) with its
// plain runs passed over a word at a time.
//
// Its mirror, [DecodeString], reads such a string back to
// encoding/json's value (FuzzDecodeString, a differential target), its
// plain runs too passed over a word at a time: the text of a tool's
// answer as Link's own clients read it (mcpstdio.ReadAnswer).
//
// # Security
//
// Holds nothing; trusts nothing it is given to be more than text.
// DecodeString reads a peer's bytes: it takes exactly the strings
// encoding/json takes, to the same value, and refuses the rest. Its
// bytes are the go-sdk's for the same result with <, > and & unescaped,
// and decode to the same result (TestTextResultIsTheGoSDKs), so a
// client reads the same answer with it or without it; a result it is not
// sure of (anything but one plain text, or a session whose protocol
// gives results a resultType) is left to the go-sdk.
package mcptext

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolrefusal"
)

// mrtrVersion is the first protocol version whose tool results carry a
// resultType (multi-round-trip requests): their results are left to the
// go-sdk's own encoding.
const mrtrVersion = "2026-07-28"

// Result is a tool's result of one text, an error or not, nothing else,
// encoded in one pass to the bytes the go-sdk writes for it.
type Result struct{ *mcp.CallToolResult }

// MarshalJSON is {"content":[{"type":"text","text":…}]} with
// "isError":true after it for an error, the text escaped as
// encoding/json escapes a string but for HTML escaping (see the package
// doc, [AppendString]), straight into the one buffer of the result.
func (r Result) MarshalJSON() ([]byte, error) {
	text := r.Content[0].(*mcp.TextContent).Text
	b := make([]byte, 0, len(text)+len(text)/16+96)
	b = append(b, '{')
	if why, ok := r.Meta[toolrefusal.Key].(string); ok && len(r.Meta) == 1 {
		// A refusal's _meta, first as the go-sdk orders it.
		b = append(b, `"_meta":{"`+toolrefusal.Key+`":`...)
		b = AppendString(b, why)
		b = append(b, "},"...)
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = AppendString(b, text)
	b = append(b, "}]"...)
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// Plain reports whether r is a result [Result] encodes as the go-sdk
// would: one text and at most isError, in a session s whose protocol has
// no resultType.
func Plain(r *mcp.CallToolResult, s mcp.Session) bool {
	if len(r.Meta) != 0 || r.StructuredContent != nil || r.InputRequests != nil || r.RequestState != "" || len(r.Content) != 1 {
		return false
	}
	t, ok := r.Content[0].(*mcp.TextContent)
	if !ok || len(t.Meta) != 0 || t.Annotations != nil {
		return false
	}
	ss, ok := s.(*mcp.ServerSession)
	if !ok {
		return false
	}
	return PlainProtocol(ss.InitializeParams())
}

// PlainProtocol reports whether a session initialized with p speaks a
// protocol whose tool results have no resultType.
func PlainProtocol(p *mcp.InitializeParams) bool {
	return p != nil && p.ProtocolVersion != "" && p.ProtocolVersion < mrtrVersion
}

// OnePass is receiving middleware (added last, so outermost: it sees each
// result as the go-sdk would encode it) making each plain tool result a
// [Result].
func OnePass(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && Plain(r, req.GetSession()) {
			return Result{r}, nil
		}
		return res, nil
	}
}
