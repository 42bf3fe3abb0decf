package agentlife

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
	"lnk.dev/lnk/internal/secret"
)

// TestWebhookListenerLivesWithTheAgent: with the real supervisor (lnk
// agent start --foreground) and Link Harness in its sandbox, an agent
// with a webhook has its listener started with it: status shows its
// port, an unsigned post is refused 401 and a signed one is taken by the
// real harness (202) and its replay refused 401; lnk agent stop stops
// the listener with the agent.
func TestWebhookListenerLivesWithTheAgent(t *testing.T) {
	w := linkWorld(t, "hooked")
	added := w.mustLnk("agent", "webhook", "add", w.agent, "ci")
	m := regexp.MustCompile(`http://127\.0\.0\.1:(\d+)/h/([0-9a-f]{32})`).FindStringSubmatch(added)
	i := strings.Index(added, "whsec_")
	if m == nil || i < 0 {
		t.Fatalf("add said:\n%s", added)
	}
	url, port := m[0], m[1]
	text, err := secret.FromString(strings.TrimSpace(added[i:]))
	if err != nil {
		t.Fatal(err)
	}
	defer text.Destroy()
	key, err := scheme.ParseSecret(append([]byte(nil), text.Bytes()...))
	if err != nil {
		t.Fatal(err)
	}
	defer key.Destroy()

	fg := exec.Command(w.lnk, "agent", "start", "--foreground", w.agent)
	if err := fg.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fg.Wait() }()
	post := func(id string) int {
		body := []byte(`{"ref":"main"}`)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if id != "" {
			ts := time.Now().Unix()
			req.Header.Set("webhook-id", id)
			req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
			req.Header.Set("webhook-signature", scheme.Sign(key, id, ts, body))
		}
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	w.waitFor("the webhook listener", func() bool { return post("") == 401 })
	var st struct {
		WebhookPort int `json:"webhook_port"`
	}
	json.Unmarshal([]byte(w.mustLnk("agent", "status", w.agent, "--json")), &st)
	if strconv.Itoa(st.WebhookPort) != port {
		t.Fatalf("status --json says webhook port %d, want %s", st.WebhookPort, port)
	}
	if out := w.mustLnk("agent", "status", w.agent); !strings.Contains(out, "webhooks  http://127.0.0.1:"+port+"/h/") {
		t.Fatalf("status shows no webhook port:\n%s", out)
	}
	got := 0
	w.waitFor("a signed post taken by the harness", func() bool { got = post("e2e-1"); return got == 202 })
	if again := post("e2e-1"); again != 401 {
		t.Fatalf("its replay: %d", again)
	}
	w.mustLnk("agent", "stop", w.agent)
	if err := <-done; err != nil {
		t.Fatalf("the foreground supervisor: %v\n%s", err, w.log())
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
		c.Close()
		t.Fatalf("the webhook listener outlived the agent:\n%s", w.log())
	}
}
