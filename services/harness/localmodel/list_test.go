package localmodel

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/builtin"
)

// Answers as Ollama's and llama.cpp's API references document them:
// Ollama's GET /api/tags, llama-server's GET /v1/models (OpenAI's list,
// owned_by "llamacpp", with its meta) and GET /props.
const (
	ollamaTags  = `{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest","modified_at":"2025-05-04T17:37:44.706015396-07:00","size":2019393189,"digest":"a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"3.2B","quantization_level":"Q4_K_M"}},{"name":"deepseek-r1:latest","model":"deepseek-r1:latest","modified_at":"2025-05-10T08:06:48.363553006-07:00","size":4683075271,"digest":"0a8c266910232fd3291e71e5ba1e058cc5af9d411192cf88b6d30e92b6e73163","details":{"parent_model":"","format":"gguf","family":"qwen2","families":["qwen2"],"parameter_size":"7.6B","quantization_level":"Q4_K_M"}}]}`
	llamaModels = `{"object":"list","data":[{"id":"models/qwen2.5-7b-instruct-q4_k_m.gguf","object":"model","created":1735142223,"owned_by":"llamacpp","meta":{"vocab_type":2,"n_vocab":152064,"n_ctx_train":32768,"n_embd":3584,"n_params":7615616512,"size":4677120000}}]}`
	llamaProps  = `{"default_generation_settings":{"n_ctx":4096,"temperature":0.8},"total_slots":1,"model_path":"/models/gemma-3-4b-it-Q4_K_M.gguf","chat_template":"","build_info":"b5000"}`
)

// fake serves routes on 127.0.0.1 and counts what it was asked.
func fake(t *testing.T, routes map[string]string) (int, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Method != http.MethodGet {
			http.Error(w, "GET only", 405)
			return
		}
		b, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(b, "redirect:") {
			http.Redirect(w, r, strings.TrimPrefix(b, "redirect:"), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(b))
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().(*net.TCPAddr).Port, &n
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

// TestListFindsEach: Ollama's models, llama-server's (by /v1/models, and
// by /props where /v1/models isn't served) and the running built-in, each
// with format "openai" and its base URL on 127.0.0.1; in a fixed order.
func TestListFindsEach(t *testing.T) {
	home := testenv.Home(t)
	op, _ := fake(t, map[string]string{"/api/tags": ollamaTags})
	lp, _ := fake(t, map[string]string{"/v1/models": llamaModels, "/props": llamaProps})
	bs := httptest.NewServer(builtin.Handler(builtin.Options{}))
	defer bs.Close()
	bp := bs.Listener.Addr().(*net.TCPAddr).Port
	if err := builtin.WriteRecord(home, builtin.Record{URL: builtin.BaseURL(bp), Port: bp, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	got, skipped := List(context.Background(), Options{Home: home, OllamaPort: op, LlamaPort: lp})
	u := func(p int) string { return "http://127.0.0.1:" + strconv.Itoa(p) + "/v1" }
	want := []Model{
		{"builtin", "link-builtin", "openai", u(bp), false},
		{"llama.cpp", "models/qwen2.5-7b-instruct-q4_k_m.gguf", "openai", u(lp), false},
		{"ollama", "deepseek-r1:latest", "openai", u(op), false},
		{"ollama", "llama3.2:latest", "openai", u(op), false},
	}
	if len(skipped) != 0 || len(got) != len(want) {
		t.Fatalf("%+v skipped %+v", got, skipped)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// An older llama-server without /v1/models: /props names its model.
	lp2, _ := fake(t, map[string]string{"/props": llamaProps})
	got, _ = List(context.Background(), Options{OllamaPort: closedPort(t), LlamaPort: lp2})
	if len(got) != 1 || got[0].Name != "gemma-3-4b-it-Q4_K_M.gguf" || got[0].Runtime != "llama.cpp" {
		t.Fatalf("%+v", got)
	}
}

// TestListPassesOver: nothing listening is no model and no line; a port
// answering another server, a redirect (never followed), garbage, an
// answer past 1 MiB, a silent server, a record whose built-in ended:
// each is passed over with its reason, and no model comes of it.
func TestListPassesOver(t *testing.T) {
	got, skipped := List(context.Background(), Options{OllamaPort: closedPort(t), LlamaPort: closedPort(t)})
	if len(got) != 0 || len(skipped) != 0 {
		t.Fatalf("nothing listening: %+v %+v", got, skipped)
	}
	target, hits := fake(t, map[string]string{"/api/tags": ollamaTags, "/v1/models": llamaModels})
	redirect := "redirect:http://127.0.0.1:" + strconv.Itoa(target)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer silent.Close()
	for _, tc := range []struct {
		name   string
		routes map[string]string
		port   int
		want   string
	}{
		{"redirect", map[string]string{"/api/tags": redirect + "/api/tags", "/v1/models": redirect + "/v1/models"}, 0, "answered 302"},
		{"garbage", map[string]string{"/api/tags": "<html>", "/v1/models": "<html>"}, 0, "answered something that isn't"},
		{"another server", map[string]string{"/api/tags": `{"status":"ok"}`, "/v1/models": `{"object":"list","data":[{"id":"x","owned_by":"someone"}]}`}, 0, "not"},
		{"too big", map[string]string{"/api/tags": `{"models":[],"pad":"` + strings.Repeat("a", MaxAnswer) + `"}`, "/v1/models": `{"pad":"` + strings.Repeat("a", MaxAnswer) + `"}`}, 0, "more than"},
		{"silent", nil, silent.Listener.Addr().(*net.TCPAddr).Port, "GET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := tc.port
			if port == 0 {
				port, _ = fake(t, tc.routes)
			}
			got, skipped := List(context.Background(), Options{OllamaPort: port, LlamaPort: port, Timeout: 300 * time.Millisecond})
			if len(got) != 0 || len(skipped) != 2 {
				t.Fatalf("%+v %+v", got, skipped)
			}
			for _, s := range skipped {
				if !strings.Contains(s.Reason, tc.want) {
					t.Fatalf("%+v, want %q", s, tc.want)
				}
			}
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("a redirect was followed %d times", hits.Load())
	}
	// A record naming a port where the built-in ended.
	home := testenv.Home(t)
	p := closedPort(t)
	builtin.WriteRecord(home, builtin.Record{URL: builtin.BaseURL(p), Port: p, PID: 1})
	got, skipped = List(context.Background(), Options{Home: home, OllamaPort: closedPort(t), LlamaPort: closedPort(t)})
	if len(got) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "it has ended") {
		t.Fatalf("%+v %+v", got, skipped)
	}
	// A record naming a port another server answers on.
	op, _ := fake(t, map[string]string{"/v1/models": llamaModels})
	builtin.WriteRecord(home, builtin.Record{URL: builtin.BaseURL(op), Port: op, PID: 1})
	got, skipped = List(context.Background(), Options{Home: home, OllamaPort: closedPort(t), LlamaPort: closedPort(t)})
	if len(got) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "another server") {
		t.Fatalf("%+v %+v", got, skipped)
	}
}

// TestProbesNeverTakeTheProxy: with HTTP_PROXY and HTTPS_PROXY naming a
// local proxy, as inside an agent's sandbox, the probes go straight to
// 127.0.0.1 and the proxy sees nothing. (Go's ProxyFromEnvironment
// skips loopback too; this fails for a transport handed the proxy.)
func TestProbesNeverTakeTheProxy(t *testing.T) {
	proxyPort, proxyHits := fake(t, map[string]string{})
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:"+strconv.Itoa(proxyPort))
	t.Setenv("http_proxy", "http://127.0.0.1:"+strconv.Itoa(proxyPort))
	t.Setenv("NO_PROXY", "")
	op, _ := fake(t, map[string]string{"/api/tags": ollamaTags})
	got, _ := List(context.Background(), Options{OllamaPort: op, LlamaPort: closedPort(t)})
	if len(got) != 2 || proxyHits.Load() != 0 {
		t.Fatalf("%+v; the proxy was asked %d times", got, proxyHits.Load())
	}
}

// TestOnlyLoopbackDial: the dialer refuses every address but 127.0.0.1,
// other loopback addresses included, before connecting.
func TestOnlyLoopbackDial(t *testing.T) {
	for _, a := range []struct{ network, addr string }{{"tcp4", "127.0.0.2:80"}, {"tcp6", "[::1]:80"}, {"tcp4", "0.0.0.0:80"}, {"udp4", "127.0.0.1:80"}} {
		if err := onlyLoopback(a.network, a.addr, nil); err == nil {
			t.Fatalf("%s %s allowed", a.network, a.addr)
		}
	}
	if err := onlyLoopback("tcp4", "127.0.0.1:11434", nil); err != nil {
		t.Fatal(err)
	}
}

// TestFindBuiltin: the record of a built-in that answers, with its
// obedience; none, an ended one, or another server at its port refused.
func TestFindBuiltin(t *testing.T) {
	home := testenv.Home(t)
	if _, err := FindBuiltin(context.Background(), home, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no record: %v", err)
	}
	bs := httptest.NewServer(builtin.Handler(builtin.Options{Obedient: true}))
	defer bs.Close()
	bp := bs.Listener.Addr().(*net.TCPAddr).Port
	want := builtin.Record{URL: builtin.BaseURL(bp), Port: bp, PID: os.Getpid(), Obedient: true}
	builtin.WriteRecord(home, want)
	if r, err := FindBuiltin(context.Background(), home, Options{}); err != nil || r != want {
		t.Fatalf("%+v %v", r, err)
	}
	other, _ := fake(t, map[string]string{"/v1/models": llamaModels})
	for port, why := range map[int]string{closedPort(t): "it has ended", other: "another server"} {
		builtin.WriteRecord(home, builtin.Record{URL: builtin.BaseURL(port), Port: port, PID: 1})
		if _, err := FindBuiltin(context.Background(), home, Options{}); err == nil || !strings.Contains(err.Error(), why) {
			t.Fatalf("%d: %v, want %q", port, err, why)
		}
	}
}

// TestNamesPrintable: a name a port answers is kept only as one printable
// line: escape sequences, bidi controls and newlines are removed before
// lnk model list prints it, and one past 256 bytes is left out.
func TestNamesPrintable(t *testing.T) {
	tags := `{"models":[{"name":"evil\u001b[2J\u001b]0;owned\u0007"},{"name":"rtl\u202egpj.exe\nline2"},{"name":"` + strings.Repeat("x", 257) + `"},{"name":"fine:latest"}]}`
	op, _ := fake(t, map[string]string{"/api/tags": tags})
	got, _ := List(context.Background(), Options{OllamaPort: op, LlamaPort: closedPort(t)})
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
	}
	want := []string{"evil[2J]0;owned", "fine:latest", "rtlgpj.exeline2"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("%q, want %q", names, want)
	}
}
