package model

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/netbroker"
)

// startSandboxProxy serves the sandbox's real proxy (helpers/netbroker) on
// 127.0.0.1 for an agent granted the local model on modelPort, as the
// sandbox's relay does, and points HTTP_PROXY at it as the sandbox sets
// it. It gives the proxy's log.
func startSandboxProxy(t *testing.T, modelPort uint16) func() []netbroker.Event {
	t.Helper()
	rules, err := netbroker.RulesFrom(&netbroker.Grants{AgentName: "a", LocalhostPorts: []uint16{modelPort}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log []netbroker.Event
	p, err := netbroker.New(netbroker.Config{Rules: rules, LocalModelPorts: []uint16{modelPort}, Log: func(e netbroker.Event) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, e)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Serve(ln); close(done) }()
	t.Cleanup(func() { p.Close(); <-done })
	t.Setenv("LNK_SANDBOX", "1")
	t.Setenv("HTTP_PROXY", "http://"+ln.Addr().String())
	return func() []netbroker.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]netbroker.Event(nil), log...)
	}
}

func portOf(t *testing.T, addr string) uint16 {
	_, ps, _ := net.SplitHostPort(addr)
	n, err := strconv.Atoi(ps)
	if err != nil {
		t.Fatal(err)
	}
	return uint16(n)
}

// TestThroughSandboxProxy: inside the sandbox the default client sends a
// local model's request through $HTTP_PROXY, loopback included, to the
// real proxy, which passes it (an inference call, on a granted port);
// a port not granted is the proxy's refusal, with its hint; a granted
// model that is off is off.
func TestThroughSandboxProxy(t *testing.T) {
	model := newProvider(t, loadRecorded(t, "openai/stream_tool_calls.http"))
	mport := portOf(t, model.Listener.Addr().String())
	events := startSandboxProxy(t, mport)

	c, err := New(Endpoint{Format: FormatOpenAI, BaseURL: model.URL + "/v1", Model: "llama3.1:8b"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Complete(context.Background(), aRequest(), nil)
	if err != nil || len(got.ToolCalls) != 2 {
		t.Fatalf("through the proxy: %+v, %v", got, err)
	}
	if n := len(model.requests()); n != 1 {
		t.Fatalf("the model was asked %d times", n)
	}
	// The proxy logs a request after its answer: wait for the line.
	passed := false
	for deadline := time.Now().Add(20 * time.Second); !passed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, e := range events() {
			passed = passed || (e.Decision == "allow" && e.Port == mport)
		}
	}
	if !passed {
		t.Errorf("the proxy logged no request to the model: %+v", events())
	}

	other := newProvider(t, loadRecorded(t, "openai/stream_text.http"))
	c, _ = New(Endpoint{Format: FormatOpenAI, BaseURL: other.URL + "/v1", Model: "m"})
	_, err = c.Complete(context.Background(), aRequest(), nil)
	var me *Error
	if !errors.As(err, &me) || me.Kind != KindRefused || !strings.Contains(me.Message, "hint:") {
		t.Fatalf("a port not granted: got %v, want the proxy's refusal with its hint", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the port not granted was reached %d times", n)
	}

	model.Close()
	c, _ = New(Endpoint{Format: FormatOpenAI, BaseURL: model.URL + "/v1", Model: "m"})
	_, err = c.Complete(context.Background(), aRequest(), nil)
	if !errors.As(err, &me) || me.Kind != KindOff {
		t.Fatalf("a granted model that is off: got %v, want off", err)
	}
}

// TestSandboxProxyRefused: a sandbox whose HTTP_PROXY is not an http://
// proxy gets no client, rather than one that goes around it.
func TestSandboxProxyRefused(t *testing.T) {
	t.Setenv("LNK_SANDBOX", "1")
	for _, v := range []string{"socks5://127.0.0.1:1080", "http://u:p@127.0.0.1:1", "http://127.0.0.1:1/x", "::"} {
		t.Setenv("HTTP_PROXY", v)
		if _, err := HTTPClient(); err == nil {
			t.Errorf("HTTP_PROXY=%s was taken", v)
		}
		if _, err := New(Endpoint{Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1/v1"}); err == nil {
			t.Errorf("New with HTTP_PROXY=%s was taken", v)
		}
	}
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	if _, err := HTTPClient(); err != nil {
		t.Errorf("the sandbox's own proxy was refused: %v", err)
	}
}
