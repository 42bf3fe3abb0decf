package netbroker

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
)

// The agent's own model key, AGENT_<AGENT>_MODEL_KEY as the secrets
// package names it, is the one sealed secret whose route passes
// inference only: another secret of the agent, another agent's model key
// granted to it, and a run naming no agent stay plain sealed secrets.
func TestModelKeyIsInferenceOnly(t *testing.T) {
	names := []string{"AGENT_MY_BOT_MODEL_KEY", "AGENT_OTHER_MODEL_KEY", "GITHUB_TOKEN"}
	for _, tc := range []struct {
		agent string
		want  map[string]bool
	}{
		{"my-bot", map[string]bool{"AGENT_MY_BOT_MODEL_KEY": true}},
		{"My.Bot", map[string]bool{"AGENT_MY_BOT_MODEL_KEY": true}},
		{"other", map[string]bool{"AGENT_OTHER_MODEL_KEY": true}},
		{"third", nil},
		{"", nil},
	} {
		c := &Grants{AgentID: strings.Repeat("ab", 16), AgentName: tc.agent}
		rules, err := RulesFrom(c)
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(Config{Rules: rules, Log: func(Event) {}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sealedRoutes(c.AgentID, NewSecret(), &SealedOptions{Names: names, Source: keySource{}})
		if err != nil {
			t.Fatal(err)
		}
		bindSealed(s, p)
		if !maps.Equal(s.Inference, tc.want) {
			t.Errorf("agent %q: inference-only routes %v, want %v", tc.agent, s.Inference, tc.want)
		}
	}
}

// countingSource is keySource, counting how often it was asked.
type countingSource struct {
	keySource
	asked atomic.Int32
}

func (c *countingSource) SealedGrant(ctx context.Context, agent, name string) (*secret.Value, secrets.Seal, error) {
	c.asked.Add(1)
	return c.keySource.SealedGrant(ctx, agent, name)
}

// A model key's route logs each request once — decision, status, reason
// and bytes, never its path, a header's value or the body — and asks the
// keybroker for the key only for a call that passed.
func TestModelKeyRouteLog(t *testing.T) {
	if !inNetns(t) {
		return
	}
	var upstream atomic.Int32
	pool := httpsAt(t, publicAddr+":443", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream.Add(1)
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, `{"content":[{"type":"text","text":"hello"}]}`)
	}))
	placeholder := NewPlaceholder("API_KEY")
	src := &countingSource{keySource: keySource{realKey, "example.com"}}
	tp := startProxy(t, Grants{}, func(c *Config) {
		c.Resolver = mapResolver{"example.com": addrs(publicAddr)}
		c.Routes = &Sealed{AgentID: "a", RouteSecret: "route-secret", Placeholders: map[string]string{"API_KEY": placeholder},
			Source: src, RootCAs: pool, Log: c.Log, Inference: map[string]bool{"API_KEY": true},
			Checker: &Checker{Rules: c.Rules, Resolver: c.Resolver, Own: c.Own}}
	})
	post := func(path, body string) *http.Response {
		resp, _, _, _ := tp.ask(t, fmt.Sprintf("POST /_link/s/route-secret/sealed/API_KEY%s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: %s\r\nContent-Length: %d\r\n\r\n%s",
			path, placeholder, len(body), body))
		return resp
	}
	msg := `{"model":"m","messages":[{"role":"user","content":"secret-prompt"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`
	if resp := post("/v1/messages", msg); resp.StatusCode != 200 {
		t.Fatalf("messages: %s", resp.Status)
	}
	ok := tp.log.waitFor(t, func(e Event) bool { return e.Kind == "route" && e.Decision == "allow" && e.Status != 0 })
	if ok.Status != 200 || ok.Up == 0 || ok.Down == 0 || ok.Host != "example.com" || ok.Reason != "a model's key: inference only; 1 provider tools removed" {
		t.Errorf("the passed call's line: %+v", ok)
	}
	for path, body := range map[string]string{"/v1/files": "{}", "/v1/messages/batches": "{}",
		"/v1/messages": `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://img.test/a.png"}}]}]}`} {
		if resp := post(path, body); resp.StatusCode != 403 {
			t.Errorf("%s: %s, want 403", path, resp.Status)
		}
	}
	tp.log.waitFor(t, func(Event) bool {
		n := 0
		for _, e := range tp.log.all() {
			if e.Kind == "route" && e.Decision == "refuse" && e.Status == 403 && e.Reason != "" {
				n++
			}
		}
		return n == 3
	})
	if n := src.asked.Load(); n != 1 {
		t.Errorf("the keybroker was asked %d times, want once (the passed call alone)", n)
	}
	if n := upstream.Load(); n != 1 {
		t.Errorf("the provider was sent %d requests, want 1", n)
	}
	for _, e := range tp.log.all() {
		line := fmt.Sprintf("%+v", e)
		for _, never := range []string{realKey, placeholder, "route-secret", "/v1/", "secret-prompt", "img.test"} {
			if strings.Contains(line, never) {
				t.Errorf("the log holds %q: %s", never, line)
			}
		}
	}
}
