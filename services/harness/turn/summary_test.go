package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/model"

	"lnk.dev/lnk/services/harness/tools"
)

// TestSummaryNotesRememberOnly: a conversation past the model's window is
// summarized into its log: first the model may call memory__remember only
// (its run call is refused, sent nowhere, logged), then it writes the
// summary, kept as a "summary" event and sent at the window's head; what
// left the window isn't sent again, nor are the notes rounds.
func TestSummaryNotesRememberOnly(t *testing.T) {
	fx := newFixture(t)
	run := startTool(t, map[string]func(string) string{"command": func(string) string { return "ran" }})
	mem := startTool(t, map[string]func(string) string{"remember": func(string) string { return "noted" }, "search": func(string) string { return "" }})
	phase := ""
	m, wire := scriptedModel(t, func(n int, req oaRequest) (string, []scriptedCall) {
		last := contentText(req.Messages[len(req.Messages)-1].Content)
		switch {
		case strings.Contains(last, "save to your notes"):
			phase = "notes"
			return "", []scriptedCall{{"memory__remember", `{"text":"the owner likes tea"}`}, {"run__command", `{"argv":["rm","-rf","work"]}`}}
		case phase == "notes" && req.Messages[len(req.Messages)-1].Role == "tool":
			phase = ""
			return "saved", nil
		case strings.Contains(last, "Write a summary"):
			return "SUMMARY: we talked of tea.", nil
		}
		return "fine", nil
	})
	set := fx.toolSet(t, tools.Tool{Name: "run-ab12", URL: run.URL}, tools.Tool{Name: "memory-ab12", URL: mem.URL})
	r := fx.runner(t, Config{Model: m, ModelName: "scripted", Window: 3000, MaxTokens: 500, Tools: set})
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		msg := fmt.Sprintf("old message %d %s", i, strings.Repeat("tea ", 100))
		if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: msg}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := mem.calls(); len(got) == 0 || !strings.Contains(got[0], "the owner likes tea") {
		t.Fatalf("memory got %v", got)
	}
	if len(run.calls()) != 0 {
		t.Fatalf("run was called while notes were saved: %v", run.calls())
	}
	if !fx.log.has("run__command", "refused", "only memory__remember") {
		t.Fatalf("the refusal isn't logged:\n%s", fx.log)
	}
	ev := fx.events(t)
	var sum int = -1
	for i, e := range ev {
		if e.Kind == "summary" {
			sum = i
		}
	}
	if sum < 0 || ev[sum].Text != "SUMMARY: we talked of tea." || ev[sum].Window == nil {
		t.Fatalf("no summary event kept")
	}
	// The refused call is answered in the log as the harness's, an error.
	var refused bool
	for _, e := range ev {
		if e.Kind == "tool_result" && e.From == harnessFrom && strings.Contains(e.Text, "only memory__remember may be called") {
			refused = true
		}
	}
	if !refused {
		t.Fatal("the refused call's answer isn't in the log")
	}
	// The request after the summary: the summary at its head, the old
	// messages and the notes rounds gone.
	reqs := wire.all()
	var after *oaRequest
	for i := range reqs {
		if strings.Contains(contentText(reqs[i].Messages[0].Content), "SUMMARY: we talked of tea.") {
			after = &reqs[i]
		}
	}
	if after == nil {
		t.Fatal("no request carries the summary at its head")
	}
	for _, msg := range after.Messages[1:] {
		text := contentText(msg.Content)
		if strings.Contains(text, "old message 0 ") || strings.Contains(text, "save to your notes") || len(msg.ToolCalls) > 0 && msg.ToolCalls[0].Function.Name == "memory__remember" {
			t.Fatalf("the window after the summary holds %.80q", text)
		}
	}
}

// TestContextLengthSummarizedOnce: a model that says it can't hold the
// window (its context-length error), though Link's estimate let it
// through, gets the window summarized and the request once more; a model
// that says it again fails the turn (no loop).
func TestContextLengthSummarizedOnce(t *testing.T) {
	for _, always := range []bool{false, true} {
		fx := newFixture(t)
		refused := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req oaRequest
			json.NewDecoder(r.Body).Decode(&req)
			last := contentText(req.Messages[len(req.Messages)-1].Content)
			if strings.Contains(last, "Write a summary") {
				fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"SUM"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
				return
			}
			if strings.HasPrefix(last, "big") && (always || refused == 0) {
				refused++
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":{"message":"This model's maximum context length is 4096 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
				return
			}
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		}))
		defer srv.Close()
		m, err := model.New(model.Endpoint{Format: model.FormatOpenAI, BaseURL: srv.URL + "/v1", Key: "placeholder", Model: "m", NoStream: true})
		if err != nil {
			t.Fatal(err)
		}
		r := fx.runner(t, Config{Model: m, ModelName: "m"})
		ctx := context.Background()
		for _, s := range []string{"one", "two"} {
			if _, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: s}, nil); err != nil {
				t.Fatal(err)
			}
		}
		a, err := r.Turn(ctx, fx.conv, "main", Incoming{Text: "big one"}, nil)
		if always {
			if err == nil || refused != 2 {
				t.Fatalf("a model that can never hold it: %v, asked %d times", err, refused)
			}
			continue
		}
		if err != nil || a.Text != "ok" || refused != 1 || !fx.log.has("can't hold the window") {
			t.Fatalf("answer %+v %v, refused %d\n%s", a, err, refused, fx.log)
		}
		ev := fx.events(t)
		if ev[len(ev)-2].Kind != "summary" || ev[len(ev)-2].Text != "SUM" {
			t.Fatalf("no summary before the answer: %+v", ev[len(ev)-2])
		}
	}
}
