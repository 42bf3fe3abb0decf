package serve

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/model"
)

// seen is a model.Client around the real built-in model's client that
// keeps every system prompt it was sent: what an agent's turn showed the
// model.
type seen struct {
	model.Client
	mu      sync.Mutex
	systems []string
}

func (s *seen) Complete(ctx context.Context, r model.Request, onText func(string)) (model.Response, error) {
	s.mu.Lock()
	s.systems = append(s.systems, r.System)
	s.mu.Unlock()
	return s.Client.Complete(ctx, r, onText)
}

// agentDir makes an Agent/ folder whose standing instructions are words.
func agentDir(t *testing.T, words string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "Agent")
	for _, sub := range []string{"", "instructions", "chats", "memory", "skills"} {
		if err := os.Mkdir(filepath.Join(d, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(d, "instructions", "instruction.md"), []byte(words+"\n"), 0o600)
	return d
}

// TestOneProcessKeepsAgentsApart: one harness answering three agents —
// two of one owner, and a second owner's agent with the first one's ID
// and name (the same backup restored by both) — with the real store,
// prompt, turn and built-in model: each answer comes from the agent the
// key names, each model request carries only that agent's instructions,
// and each conversation is kept in its own agent's chats/ alone.
func TestOneProcessKeepsAgentsApart(t *testing.T) {
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	defer srv.Close()
	idA, idB := strings.Repeat("a1", 16), strings.Repeat("b2", 16)
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	type ag struct {
		cfg   *config.Config
		model *seen
		words string
	}
	var ags []*ag
	for _, a := range []struct{ id, owner, name, words string }{
		{idA, "ana", "main", "ALPHA-INSTRUCTIONS"},
		{idB, "ana", "second", "BETA-INSTRUCTIONS"},
		{idA, "bob", "main", "BOB-INSTRUCTIONS"},
	} {
		c := &config.Config{AgentID: a.id, Owner: a.owner, Name: a.name, Key: config.NewKey(), Port: port, AgentDir: agentDir(t, a.words),
			Model: config.Model{Format: "openai", BaseURL: srv.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"}}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		m, err := model.New(model.Endpoint{Format: "openai", BaseURL: srv.URL + "/v1", Key: "placeholder", Model: builtin.ModelName})
		if err != nil {
			t.Fatal(err)
		}
		ags = append(ags, &ag{cfg: c, model: &seen{Client: m}, words: a.words})
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		var cs []*config.Config
		models := map[*config.Config]model.Client{}
		for _, a := range ags {
			cs = append(cs, a.cfg)
			models[a.cfg] = a.model
		}
		errc <- runWith(ctx, cs, "", Options{}, func(c *config.Config) model.Client { return models[c] })
	}()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}()
	for i, a := range ags {
		c, err := endpoint.NewClient(config.BridgeFor(a.cfg))
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		var seq int64
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if seq, err = c.Send(ctx, "main", "message "+strconv.Itoa(i), func(s string) { out.WriteString(s) }); err == nil || time.Now().After(end) {
				break
			}
		}
		if err != nil || !strings.Contains(out.String(), "message "+strconv.Itoa(i)) || seq < 2 {
			t.Fatalf("agent %d: %q %d, %v", i, out.String(), seq, err)
		}
	}
	for i, a := range ags {
		a.model.mu.Lock()
		systems := strings.Join(a.model.systems, "\n")
		a.model.mu.Unlock()
		if !strings.Contains(systems, a.words) {
			t.Errorf("agent %d's model was not sent its own instructions", i)
		}
		b, err := os.ReadFile(filepath.Join(a.cfg.AgentDir, "chats", "main", "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for j, o := range ags {
			if j == i {
				continue
			}
			if strings.Contains(systems, o.words) {
				t.Errorf("agent %d's model was sent agent %d's instructions", i, j)
			}
			if strings.Contains(string(b), "message "+strconv.Itoa(j)) {
				t.Errorf("agent %d's conversation holds agent %d's message", i, j)
			}
		}
		if !strings.Contains(string(b), "message "+strconv.Itoa(i)) {
			t.Errorf("agent %d's conversation lacks its message:\n%s", i, b)
		}
	}
}
