package model

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/builtin"
)

// TestBuiltinRoundTrip: the client and Link's built-in model, the real
// server in-process, streamed and whole: "run ls work" comes back as a
// run__command call with its argv, and the run's answer sent back as
// the tool's words gets an answer in words quoting it.
func TestBuiltinRoundTrip(t *testing.T) {
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	defer srv.Close()
	runTool := Tool{Name: "run__command", Description: "Runs a command.",
		Schema: json.RawMessage(`{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}},"required":["argv"]}`)}
	for _, noStream := range []bool{false, true} {
		c := mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: srv.URL + "/v1", Model: builtin.ModelName, Key: "placeholder", NoStream: noStream, HTTPClient: srv.Client()})
		req := Request{System: "You are Link's agent.", Tools: []Tool{runTool}, Messages: []Message{{Role: User, Text: "run ls work"}}}
		var streamed strings.Builder
		got, err := c.Complete(context.Background(), req, func(s string) { streamed.WriteString(s) })
		if err != nil {
			t.Fatalf("stream=%v: %v", !noStream, err)
		}
		if got.Stop != StopToolCalls || len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "run__command" ||
			string(got.ToolCalls[0].Arguments) != `{"argv":["ls","work"]}` || got.ToolCalls[0].ID == "" {
			t.Fatalf("stream=%v: %+v", !noStream, got)
		}
		if got.Usage.InputTokens == 0 || got.Usage.OutputTokens == 0 {
			t.Errorf("stream=%v: no usage: %+v", !noStream, got.Usage)
		}

		req.Messages = append(req.Messages,
			Message{Role: Assistant, ToolCalls: got.ToolCalls},
			Message{Role: ToolRole, ToolCallID: got.ToolCalls[0].ID, ToolName: "run__command", Text: "notes.md\ntodo.md"})
		streamed.Reset()
		got, err = c.Complete(context.Background(), req, func(s string) { streamed.WriteString(s) })
		if err != nil {
			t.Fatalf("stream=%v, the tool's answer: %v", !noStream, err)
		}
		if got.Stop != StopEnd || len(got.ToolCalls) != 0 || !strings.Contains(got.Text, "notes.md") || streamed.String() != got.Text {
			t.Fatalf("stream=%v, the tool's answer: %+v (streamed %q)", !noStream, got, streamed.String())
		}
	}
}

// TestBuiltinThroughSandboxProxy: the built-in model as a local model
// behind the sandbox's real proxy, reached by the default client as the
// harness inside the sandbox reaches it.
func TestBuiltinThroughSandboxProxy(t *testing.T) {
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	defer srv.Close()
	startSandboxProxy(t, portOf(t, srv.Listener.Addr().String()))
	c, err := New(Endpoint{Format: FormatOpenAI, BaseURL: srv.URL + "/v1", Model: builtin.ModelName})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: User, Text: "hello there"}}}, nil)
	if err != nil || got.Stop != StopEnd || !strings.Contains(got.Text, "hello there") {
		t.Fatalf("got %+v, %v", got, err)
	}
}
