package filetool

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolrefusal"
)

// mrtrVersion is the first protocol version whose tool results carry a
// resultType (multi-round-trip requests): their results are left to the
// go-sdk's own encoding.
const mrtrVersion = "2026-07-28"

// textResult is a tool's result as serve's handler makes it — one text,
// an error or not, nothing else — encoded in one pass. The go-sdk's own
// encoding of it is compacted twice over (its content's encoding inside
// its own, then its own inside the response), a scan of every byte of a
// 4 KiB read's answer each time: a fifth of serve's CPU a call. Its
// bytes are the go-sdk's (TestTextResultIsTheGoSDKs).
type textResult struct{ *mcp.CallToolResult }

func (r textResult) MarshalJSON() ([]byte, error) {
	text, err := json.Marshal(r.Content[0].(*mcp.TextContent).Text)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(text)+64)
	b = append(b, '{')
	if why, ok := r.Meta[toolrefusal.Key].(string); ok && len(r.Meta) == 1 {
		// A refusal's _meta, first as the go-sdk orders it.
		w, err := json.Marshal(why)
		if err != nil {
			return nil, err
		}
		b = append(b, `"_meta":{"`+toolrefusal.Key+`":`...)
		b = append(b, w...)
		b = append(b, "},"...)
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = append(b, text...)
	b = append(b, "}]"...)
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// plainText is a result textResult encodes as the go-sdk would: one text
// and at most isError, for a session whose protocol has no resultType.
func plainText(r *mcp.CallToolResult, s mcp.Session) bool {
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
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion != "" && p.ProtocolVersion < mrtrVersion
}

// oneTextPass is receiving middleware (outermost: it sees each result as
// the go-sdk would encode it) making each plain tool result a
// [textResult].
func oneTextPass(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && plainText(r, req.GetSession()) {
			return textResult{r}, nil
		}
		return res, nil
	}
}
