package tools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// list reads a tool's calls in a session of its own, ended when the list
// is read: page after page, stopping past maxPages pages or at a cursor
// seen before, and answering what it listed by then (complete false, and
// why). err is a tool that failed to start or to list.
func (s *Set) list(ctx context.Context, t *toolState) (calls []*mcp.Tool, note string, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.set.StartTimeout)
	defer cancel()
	cs, err := s.connect(ctx, t.url)
	if err != nil {
		return nil, "", err
	}
	defer cs.Close()
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return nil, "", fmt.Errorf("it took over %v to list its calls", s.set.StartTimeout)
			}
			return nil, "", fmt.Errorf("listing its calls: %w", scrub(err, t.url))
		}
		calls = append(calls, res.Tools...)
		if res.NextCursor == "" {
			return calls, "", nil
		}
		if page == s.set.MaxPages {
			return calls, fmt.Sprintf("it lists more than %d pages: offered what it listed by then", s.set.MaxPages), nil
		}
		if seen[res.NextCursor] || res.NextCursor == cursor {
			return calls, "it listed a page twice: offered what it listed by then", nil
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ProtocolVersion is the MCP version the harness's sessions ask for: the
// latest whose sessions start with initialize, as the tool bridge's do.
// Left to its default, the go-sdk first asks a newer version's stateless
// server/discover, which the bridge does not offer (a session starts with
// initialize; it answers "method not found"): a request more through the
// proxy and the bridge at every session's start.
const ProtocolVersion = "2025-11-25"

// connect opens a session with the tool at u, within the start timeout.
func (s *Set) connect(ctx context.Context, u string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, s.set.StartTimeout)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "lnk-harness", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             u,
		HTTPClient:           s.http,
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("it took over %v to start", s.set.StartTimeout)
		}
		return nil, fmt.Errorf("it failed to start: %w", scrub(err, u))
	}
	return cs, nil
}
