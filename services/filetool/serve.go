package filetool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcpstdio"
	"lnk.dev/lnk/internal/mcptext"
	"lnk.dev/lnk/internal/toolrefusal"
)

// Version is what the server says it is.
const Version = "1"

// instructions are what the server says of the names it takes, as the
// file tool's sandbox (package grants) and apply hold them: the agent
// folder's instructions/, skills/ and chats/ bound read-only and chats/
// never written (apply refuses it, and the owner's instructions/ and
// skills/ under --write .); its memory/ not bound, and never written.
const instructions = "The agent's files. Paths are relative to its files folder, but instructions/, skills/ and chats/ are those of its own folder, read here and never written: chats/ is Link's to write, instructions/ and skills/ its owner's. memory/ is never written here, and its own folder's memory/ is not reached: the memory tool keeps it."

// NewServer is the MCP server for one session: the offer's calls, each
// run in sb.
func NewServer(o Offer, sb *Sandboxed) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "lnk-file-tool", Title: "Link File", Version: Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	for _, t := range o.Tools() {
		name := t.name
		s.AddTool(&mcp.Tool{Name: name, Description: t.description, InputSchema: t.schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args json.RawMessage
				if req.Params != nil {
					args = req.Params.Arguments
				}
				return callResult(ctx, o, sb, name, args), nil
			})
	}
	s.AddReceivingMiddleware(mcptext.OnePass)
	return s
}

// callResult runs one call in sb: its answer as the tool's text, or its
// error as a tool error.
func callResult(ctx context.Context, o Offer, sb *Sandboxed, name string, args json.RawMessage) *mcp.CallToolResult {
	ok, err := sb.Call(ctx, name, args)
	if err != nil {
		var ce *CallError
		msg := err.Error()
		if !errors.As(err, &ce) {
			msg = "lnk-file-tool: " + msg
		}
		res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
		if ce != nil && ce.Refused {
			// The bridge logs it as refused, with its words
			// (internal/toolrefusal).
			res.Meta = toolrefusal.Meta(msg)
		}
		return res
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(o.Shape(name, ok))}}}
}

// Serve serves one session on t until the client ends it, each call it
// sent answered first ([drainTransport]), then ends the sandboxed
// process. On Link's own transport ([mcpstdio.Transport]) a plain
// tools/call takes its fast path, run as the server's handler runs it
// ([callResult]), one call at a time (the sandboxed process runs them so
// anyway).
func Serve(ctx context.Context, o Offer, sb *Sandboxed, t mcp.Transport) error {
	defer sb.Close()
	s := NewServer(o, sb)
	if lt, ok := t.(*mcpstdio.Transport); ok {
		lt.SetFast(mcpstdio.Tools{
			Server: s,
			Names:  o.names(),
			Call: func(ctx context.Context, name string, args json.RawMessage) *mcp.CallToolResult {
				return callResult(ctx, o, sb, name, args)
			},
			OneAtATime: true,
		})
	}
	return s.Run(ctx, drainTransport{t})
}

// names are the offer's tools.
func (o Offer) names() []string {
	var names []string
	for _, t := range o.Tools() {
		names = append(names, t.name)
	}
	return names
}
