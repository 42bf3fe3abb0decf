package runtool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startAt calls start in thread at hops, its answer's text and whether
// it was refused.
func startAt(t *testing.T, cs *mcp.ClientSession, thread string, hops int, argv ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "start", Arguments: map[string]any{"argv": argv},
		Meta: mcp.Meta{"link.local/thread": thread, "link.local/hops": hops}})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestStartRefusedWhereItsEndingCouldNotGo: a background command's
// ending is a message one hop past its start, into its conversation, so
// a start whose ending the way in would refuse is refused itself, as the
// scheduler refuses such a job: at the agent's hop cap ([tool.scheduler]
// hops = 3, a start at hop 3 would end at hop 4), and in a stranger's
// conversation (webhook:<name>), where no message from run: goes, and in
// one whose name is no conversation's (a path, .., past 128 bytes). Each
// refusal says why, with a hint, and starts nothing (no record); the
// controls, a start at hop 2 and one in the owner's main, run.
func TestStartRefusedWhereItsEndingCouldNotGo(t *testing.T) {
	a := testAgent(t, "[tool.scheduler]\nhops = 3\n")
	cs := connect(t, a)
	text, isErr := startAt(t, cs, "main", 3, "true")
	if !isErr || !strings.Contains(text, "hop 4") || !strings.Contains(text, "[tool.scheduler] hops = 3") || !strings.Contains(text, "hint: ") {
		t.Fatalf("a start at the hop cap: %v %q", isErr, text)
	}
	text, isErr = startAt(t, cs, "webhook:ci", 0, "true")
	if !isErr || !strings.Contains(text, "stranger's conversation") {
		t.Fatalf("a start in a stranger's conversation: %v %q", isErr, text)
	}
	// A name no conversation has (store.CheckThread, the one rule the
	// way in applies to the ending): its ending could never be told.
	for _, th := range []string{"a/b", "..", "x\u00e9", strings.Repeat("t", 129)} {
		if text, isErr := startAt(t, cs, th, 0, "true"); !isErr || !strings.Contains(text, "hint: ") {
			t.Errorf("a start in %q: %v %q", th, isErr, text)
		}
	}
	if text, _ := call(t, cs, "main", "list", nil); strings.Contains(text, "running") || strings.Contains(text, "ended") {
		t.Fatalf("a refused start left a record: %q", text)
	}
	if text, _ := call(t, cs, "webhook:ci", "list", nil); strings.Contains(text, "running") || strings.Contains(text, "ended") {
		t.Fatalf("a refused start left a record: %q", text)
	}
	// The controls: one hop less, and the owner's conversation.
	if text, isErr := startAt(t, cs, "main", 2, "true"); isErr || !startedID.MatchString(text) {
		t.Fatalf("a start at hop 2: %v %q", isErr, text)
	}
	if text, isErr := startAt(t, cs, "work-1", 0, "true"); isErr || !startedID.MatchString(text) {
		t.Fatalf("a start in work-1: %v %q", isErr, text)
	}
}
