package tools

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/toolbridge"
)

// TestSessionThroughTheBridgeStartsWithInitialize: the harness's sessions
// with a tool behind the sandbox's real proxy and tool bridge (lnk-web
// on stdio) start with initialize, the bridge's way: the list's session
// and the call's each pass initialize, the call is answered, and the
// bridge refuses nothing, where the go-sdk's default (a newer version's
// stateless server/discover first) had every session's start refused
// once ("no session") and logged as a refusal.
func TestSessionThroughTheBridgeStartsWithInitialize(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(rw, "the page's words")
	}))
	defer page.Close()
	var mu sync.Mutex
	var events []toolbridge.Event
	hr := newHarnessRoute(t, testenv.Bin(t, "lnk-web"), func(e toolbridge.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	})
	log := &logBuf{}
	set := hr.set(t, log.logf)
	defer set.Close()
	ctx := context.Background()
	tt := set.Begin(ctx, Scope{Thread: "t"})
	r := tt.Call(ctx, model.ToolCall{ID: "1", Name: "web__fetch", Arguments: json.RawMessage(`{"url":"` + page.URL + `/p"}`)})
	tt.End()
	set.ending.Wait()
	if r.IsError || !strings.Contains(r.Text, "the page's words") {
		t.Fatalf("the call through the bridge: %+v\n%s", r, log)
	}
	mu.Lock()
	defer mu.Unlock()
	inits := 0
	for _, e := range events {
		if strings.HasPrefix(e.Outcome, "refused") {
			t.Errorf("the bridge refused %q: %s", e.Call, e.Outcome)
		}
		if e.Call == "initialize" && e.Outcome == "passed" {
			inits++
		}
	}
	if inits != 2 {
		t.Errorf("%d sessions started with initialize, want 2 (the list's and the call's): %+v", inits, events)
	}
}
