package netbroker

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLocalModelByAnotherNameIsStillFiltered: a local model is known by
// the address the proxy dials, never by the name a request gives: a
// [lan] host whose name resolves to loopback (a hostile DNS answer, or
// the owner's own alias) reaches the model's port as any granted
// loopback port would, so judged by name it would pass its admin API
// and a CONNECT unfiltered. By that name the model is refused (403), its
// admin API and CONNECT alike; the positive controls: inference as
// localhost passes, and that name reaches a granted loopback port that
// is no model's.
func TestLocalModelByAnotherNameIsStillFiltered(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.URL.Path, b)
	}))
	t.Cleanup(model.Close)
	port := portOf(t, model.Listener)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "not a model") }))
	t.Cleanup(other.Close)
	otherPort := portOf(t, other.Listener)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port, otherPort}, LANHosts: []string{"model.lan"}}, func(c *Config) {
		c.LocalModelPorts = []uint16{port}
		c.Resolver = mapResolver{"model.lan": addrs("127.0.0.1")}
	})
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("POST http://model.lan:%d/api/pull HTTP/1.1\r\nHost: model.lan:%d\r\nContent-Length: 2\r\n\r\n{}", port, port))
	if resp.StatusCode != 403 || !strings.Contains(body, "local model") {
		t.Fatalf("the admin API by a name resolving to loopback: %s %q", resp.Status, body)
	}
	if resp, body, _, _ := tp.ask(t, fmt.Sprintf("CONNECT model.lan:%d HTTP/1.1\r\n\r\n", port)); resp.StatusCode != 403 || !strings.Contains(body, "local model") {
		t.Fatalf("CONNECT to the model by a name resolving to loopback: %s %q", resp.Status, body)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Decision == "refuse" && e.Kind == "connect" })
	if !strings.Contains(ev.Reason, "local model") {
		t.Fatalf("the refusal logged: %+v", ev)
	}
	chat := `{"model":"m","messages":[]}`
	resp, body, _, _ = tp.ask(t, fmt.Sprintf("POST http://localhost:%d/api/chat HTTP/1.1\r\nHost: localhost:%d\r\nContent-Length: %d\r\n\r\n%s", port, port, len(chat), chat))
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "/api/chat {") {
		t.Fatalf("inference as localhost: %s %q", resp.Status, body)
	}
	resp, body, _, _ = tp.ask(t, fmt.Sprintf("GET http://model.lan:%d/ HTTP/1.1\r\nHost: model.lan:%d\r\n\r\n", otherPort, otherPort))
	if resp.StatusCode != 200 || body != "not a model" {
		t.Fatalf("that name at a port no model's: %s %q", resp.Status, body)
	}
}
