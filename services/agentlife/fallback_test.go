package agentlife

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/harness/config"
)

// hostedModel serves Anthropic's messages on loopback, each request
// answered with a stream recorded in its documented format, and counts
// the requests.
func hostedModel(t *testing.T) (addr string, asked *atomic.Int32) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recorded", "anthropic_stream_text.http"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	asked = &atomic.Int32{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), asked
}

// TestFallbackFlag: lnk agent start --model (a local model on a loopback
// port nothing listens on) --fallback (Anthropic's messages on loopback)
// keeps both in agent.toml's [model] and [model.fallback], config.json
// and the compiled grants (each port reached for inference only), and
// lnk agent status shows the fallback; a message sent while the local
// model is off is answered by the fallback, through the agent's sandbox
// and its proxy. --fallback none removes it, keeping the model;
// --fallback builtin is refused with a hint, nothing written.
func TestFallbackFlag(t *testing.T) {
	w := linkWorld(t, "falls")
	local := freePorts(t, 1)
	hosted, asked := hostedModel(t)
	_, hostedPort, _ := net.SplitHostPort(hosted)
	model := "openai:http://127.0.0.1:" + strconv.Itoa(local) + "/v1:llama3.1:8b"
	fallback := "anthropic:http://" + hosted + "/v1:claude-sonnet-4-5"

	code, _, errs := w.lnkCmd("agent", "start", w.agent, "--model", model, "--fallback", "builtin")
	if code == 0 || !strings.Contains(errs, "never Link's built-in") || !strings.Contains(errs, "hint: lnk agent start falls --fallback") {
		t.Fatalf("--fallback builtin: exit %d\n%s", code, errs)
	}
	if strings.Contains(w.agentTOML(), "[model") {
		t.Fatalf("a refused --fallback wrote agent.toml:\n%s", w.agentTOML())
	}

	w.mustLnk("agent", "start", w.agent, "--model", model, "--fallback", fallback)
	a, err := caps.LoadAgent(w.home, w.agent)
	if err != nil {
		t.Fatal(err)
	}
	if a.Model == nil || a.Model.Format != "openai" || a.Model.Model != "llama3.1:8b" || a.Model.Fallback == nil ||
		*a.Model.Fallback != (caps.AgentModel{Format: "anthropic", BaseURL: "http://" + hosted + "/v1", Model: "claude-sonnet-4-5"}) {
		t.Fatalf("agent.toml's [model] read back: %+v\n%s", a.Model, w.agentTOML())
	}
	if !strings.Contains(w.agentTOML(), "[model.fallback]") {
		t.Fatalf("agent.toml:\n%s", w.agentTOML())
	}
	c, err := config.ReadPath(filepath.Join(w.home, "Link", "Agents", w.agent, "Harnesses", "link", config.File))
	if err != nil || c.Fallback == nil || c.Fallback.Format != "anthropic" || c.Fallback.BaseURL != "http://"+hosted+"/v1" || c.Fallback.Model != "claude-sonnet-4-5" || c.Fallback.Key != placeholderKey {
		t.Fatalf("config.json's fallback: %+v, %v", c, err)
	}
	comp, err := caps.CompileLinkHarness(w.home, w.agent)
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := strconv.Atoi(hostedPort)
	for _, p := range []uint16{uint16(local), uint16(hp)} {
		if !slices.Contains(comp.LocalModelPorts, p) || !slices.Contains(comp.LocalhostPorts, p) {
			t.Fatalf("the compiled grants lack port %d for inference: local model ports %v, localhost %v", p, comp.LocalModelPorts, comp.LocalhostPorts)
		}
	}
	st := w.mustLnk("agent", "status", w.agent)
	if !strings.Contains(st, "fallback  anthropic http://"+hosted+"/v1 claude-sonnet-4-5") || !strings.Contains(st, "model     openai http://127.0.0.1:"+strconv.Itoa(local)+"/v1 llama3.1:8b") {
		t.Fatalf("lnk agent status:\n%s", st)
	}
	var js struct {
		Model *caps.AgentModel `json:"model"`
	}
	if err := json.Unmarshal([]byte(w.mustLnk("agent", "status", w.agent, "--json")), &js); err != nil || js.Model == nil || js.Model.Fallback == nil || js.Model.Fallback.Model != "claude-sonnet-4-5" {
		t.Fatalf("lnk agent status --json: %+v, %v", js.Model, err)
	}

	if out := w.send("hello"); !strings.Contains(out, "Your note is in work/todo.md.") || asked.Load() != 1 {
		t.Fatalf("with the local model off, answered %q; the fallback asked %d times\nlog:\n%s", out, asked.Load(), w.log())
	}

	w.mustLnk("agent", "stop", w.agent)
	w.mustLnk("agent", "start", w.agent, "--fallback", "none")
	a, err = caps.LoadAgent(w.home, w.agent)
	if err != nil || a.Model == nil || a.Model.Fallback != nil || a.Model.Model != "llama3.1:8b" {
		t.Fatalf("after --fallback none: %+v, %v", a.Model, err)
	}
	if st := w.mustLnk("agent", "status", w.agent); !strings.Contains(st, "fallback  none") {
		t.Fatalf("lnk agent status after --fallback none:\n%s", st)
	}
}
