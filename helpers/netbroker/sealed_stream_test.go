package netbroker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

const realModelKey = "sk-ant-REAL-model-key-0f1e2d3c4b5a6978"

// streamingProvider is a fake Anthropic: it takes a call whose X-Api-Key
// is the real key (401 otherwise), keeps what it was sent, and answers
// the prompt spelled out, three characters an event, as a stream: a
// value in it is never written out whole in one event.
type streamingProvider struct {
	mu                 sync.Mutex
	bodies, queries    []string
	authorization, key []string
}

func (p *streamingProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.bodies = append(p.bodies, string(body))
	p.queries = append(p.queries, r.URL.RawQuery)
	p.authorization = append(p.authorization, r.Header.Get("Authorization"))
	p.key = append(p.key, r.Header.Get("X-Api-Key"))
	p.mu.Unlock()
	if r.Header.Get("X-Api-Key") != realModelKey {
		http.Error(w, `{"type":"error","error":{"type":"authentication_error"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	text := req.Messages[0].Content
	for i := 0; i < len(text); i += 3 {
		d, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]string{"type": "text_delta", "text": text[i:min(i+3, len(text))]}})
		fmt.Fprintf(w, "event: content_block_delta\ndata: %s\n\n", d)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
}

// streamText joins a stream's text deltas: what the agent reads.
func streamText(t *testing.T, b []byte) string {
	t.Helper()
	var out strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Delta struct{ Text string } `json:"delta"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("an event is not JSON: %q", d)
		}
		out.WriteString(ev.Delta.Text)
	}
	return out.String()
}

// A model key goes into the header its grant names (X-Api-Key, as
// Anthropic authenticates) and nowhere else: an agent that puts its
// placeholder in the prompt and asks for it spelled out gets the
// placeholder spelled out, three characters an event where the scrub
// would never see the key whole; the provider's body, query and other
// headers hold the placeholder alone. The call authenticated (200):
// the positive control. Against the real proxy and a real keybroker.
func TestModelKeyNeverInABody(t *testing.T) {
	if !inNetns(t) {
		return
	}
	prov := &streamingProvider{}
	pool := httpsAt(t, publicAddr+":443", prov)
	sp := startSealedProxy(t, pool, sealedGrant{name: "AGENT_MAIN_MODEL_KEY", value: realModelKey, headers: []string{"x-api-key"}})
	ph := sp.told.Placeholders["AGENT_MAIN_MODEL_KEY"]
	prompt := "Spell out this string exactly, nothing else: " + ph
	body, _ := json.Marshal(map[string]any{"model": "claude-x", "max_tokens": 64, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": prompt}}})
	resp, got := sp.do(t, "POST", "AGENT_MAIN_MODEL_KEY", "/v1/messages?key="+ph,
		[]string{"X-Api-Key: " + ph, "Authorization: Bearer " + ph, "Content-Type: application/json"}, string(body))
	if resp.StatusCode != 200 {
		t.Fatalf("the call did not authenticate with the key in X-Api-Key: %s %q", resp.Status, got)
	}
	text := streamText(t, got)
	if strings.Contains(text, realModelKey) || strings.Contains(string(got), realModelKey) {
		t.Errorf("the key came back in the answer: %q", text)
	}
	if text != prompt {
		t.Errorf("the answer spelled out %q, want the prompt with its placeholder, %q", text, prompt)
	}
	prov.mu.Lock()
	defer prov.mu.Unlock()
	if len(prov.bodies) != 1 {
		t.Fatalf("the provider got %d calls", len(prov.bodies))
	}
	if strings.Contains(prov.bodies[0], realModelKey) || !strings.Contains(prov.bodies[0], ph) {
		t.Errorf("the provider's body: %q", prov.bodies[0])
	}
	if prov.queries[0] != "key="+ph {
		t.Errorf("the provider's query: %q, want the placeholder as sent", prov.queries[0])
	}
	if prov.authorization[0] != "Bearer "+ph {
		t.Errorf("a header the grant does not name was sent %q, want the placeholder as sent", prov.authorization[0])
	}
	if prov.key[0] != realModelKey {
		t.Errorf("X-Api-Key was sent %q", prov.key[0])
	}
	sp.noSecretsLogged(t, realModelKey)
}

// On a model key's route, against the real proxy and keybroker: a
// request asking the provider to search (issue #22's three fields, a
// model that searches on its own) is refused 403 and never reaches the
// provider; a field not in the API's list is dropped before it leaves,
// and the call passes (the positive control).
func TestModelKeyRouteRefusesSearch(t *testing.T) {
	if !inNetns(t) {
		return
	}
	prov := &streamingProvider{}
	pool := httpsAt(t, publicAddr+":443", prov)
	sp := startSealedProxy(t, pool, sealedGrant{name: "AGENT_MAIN_MODEL_KEY", value: realModelKey, headers: []string{"X-Api-Key"}})
	ph := sp.told.Placeholders["AGENT_MAIN_MODEL_KEY"]
	head := []string{"X-Api-Key: " + ph, "Content-Type: application/json"}
	for _, extra := range []string{`"web_search_options":{}`, `"search_parameters":{"mode":"on"}`, `"plugins":[{"id":"web"}]`} {
		resp, b := sp.do(t, "POST", "AGENT_MAIN_MODEL_KEY", "/v1/chat/completions", head, `{"model":"m","messages":[{"role":"user","content":"news?"}],`+extra+`}`)
		if resp.StatusCode != 403 || !strings.Contains(string(b), "search or fetch") {
			t.Errorf("%s: %s %q", extra, resp.Status, b)
		}
	}
	resp, b := sp.do(t, "POST", "AGENT_MAIN_MODEL_KEY", "/v1/chat/completions", head, `{"model":"perplexity/sonar-pro","messages":[{"role":"user","content":"news?"}]}`)
	if resp.StatusCode != 403 || !strings.Contains(string(b), "searches the web on its own") {
		t.Errorf("a searching model: %s %q", resp.Status, b)
	}
	prov.mu.Lock()
	if len(prov.bodies) != 0 {
		t.Errorf("a refused call reached the provider: %q", prov.bodies)
	}
	prov.mu.Unlock()
	resp, b = sp.do(t, "POST", "AGENT_MAIN_MODEL_KEY", "/v1/chat/completions", head, `{"model":"m","messages":[{"role":"user","content":"hi"}],"transforms":["middle-out"]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("the call without a search: %s %q", resp.Status, b)
	}
	prov.mu.Lock()
	defer prov.mu.Unlock()
	if len(prov.bodies) != 1 || strings.Contains(prov.bodies[0], "transforms") || !strings.Contains(prov.bodies[0], `"content":"hi"`) {
		t.Errorf("the provider got %q", prov.bodies)
	}
	ev := sp.log.waitFor(t, func(e Event) bool { return e.Kind == "route" && e.Decision == "allow" && e.Status == 200 })
	if !strings.Contains(ev.Reason, "1 fields not in the API's list dropped") {
		t.Errorf("the passed call's line: %+v", ev)
	}
}
