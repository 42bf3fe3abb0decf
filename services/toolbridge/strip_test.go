package toolbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// metaCapsKey is where the 2026-07-28 revision's client sends its
// capabilities: in the _meta of params.
const metaCapsKey = "io.modelcontextprotocol/clientCapabilities"

const initWithMetaCaps = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"1"},` +
	`"_meta":{"` + metaCapsKey + `":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}},"kept":"yes"}}}`

// The client's capabilities are removed from every initialize: from its
// params' capabilities and from the _meta key the 2026-07-28 revision
// sends them in, whether it starts a session or is sent inside one.
func TestEveryInitializeLosesTheClientsCapabilities(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	r := newRig(t, askNone, Settings{}, "LNK_TEST_RECORD="+record)
	st, sid, body := r.post("test", "", initWithMetaCaps)
	if st != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", st, body)
	}
	r.post("test", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// An initialize inside the session (the server refuses a second one;
	// what matters is what reached it).
	r.post("test", sid, strings.Replace(initWithMetaCaps, `"id":1`, `"id":2`, 1))
	if st, body := r.call(sid, "echo", "last"); st != 200 || !strings.Contains(body, "last") {
		t.Fatalf("a call after: %d %s", st, body)
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if n := strings.Count(got, `"method":"initialize"`); n != 2 {
		t.Fatalf("%d initialize requests reached the server, want 2: %s", n, got)
	}
	if n := strings.Count(got, `"kept":"yes"`); n != 2 {
		t.Errorf("the rest of _meta should pass as it is (%d of 2): %s", n, got)
	}
	for _, leak := range []string{metaCapsKey, "sampling", "elicitation", "roots"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q reached the server: %s", leak, got)
		}
	}
}

// An _meta written twice is sent as encoding/json reads it (the last),
// with the capabilities gone from every copy a server's reader might
// take, and so is one in another case.
func TestMetaCapabilitiesWrittenTwiceAreRemoved(t *testing.T) {
	for name, params := range map[string]string{
		"twice":         `{"_meta":{"` + metaCapsKey + `":{"sampling":{}}},"_meta":{"progressToken":1}}`,
		"another case":  `{"_META":{"` + metaCapsKey + `":{"sampling":{}}},"_meta":{"progressToken":1}}`,
		"key in a case": `{"_meta":{"IO.modelcontextprotocol/ClientCapabilities":{"sampling":{}}}}`,
	} {
		out, err := stripMetaCapabilities([]byte(params))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(string(out), "sampling") {
			t.Errorf("%s: %s passed as %s", name, params, out)
		}
	}
}
