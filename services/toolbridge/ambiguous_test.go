package toolbridge

import (
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// A call spelled so the bridge and the server could read two different
// names (a key twice, or in another case: the go-sdk and JavaScript read
// keys case-sensitively, encoding/json does not) is refused, never judged
// by one reading and run by the other.
func TestAmbiguousCallIsRefusedNotRun(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, Settings{})
	sid := r.initSession()
	for _, params := range []string{
		`{"name":"delete","NAME":"echo","arguments":{"text":"x"}}`,
		`{"name":"delete","Name":"echo","arguments":{"text":"x"}}`,
		`{"name":"delete","name":"echo","arguments":{"text":"x"}}`,
		`{"name":"echo","arguments":{"text":"x"},"Arguments":{"text":"y"}}`,
		`{"name":"echo","\u006eame":"delete","arguments":{"text":"x"}}`,
	} {
		st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":`+params+`}`)
		if st != 200 || !strings.Contains(body, "refused") || strings.Contains(body, "deleted") {
			t.Errorf("%s: %d %s", params, st, body)
		}
	}
	// The plain call still passes.
	if st, body := r.call(sid, "echo", "plain"); st != 200 || !strings.Contains(body, "plain") {
		t.Fatalf("%d %s", st, body)
	}
}

// Capabilities in _meta or initialize's params spelled in another case
// are removed too: a server decoding with encoding/json reads them as
// the lower-case key.
func TestCapabilitiesInAnyCaseAreRemoved(t *testing.T) {
	p, err := stripClientCapabilities([]byte(`{"capabilities":{"sampling":{}},"Capabilities":{"sampling":{}},"capabilitieſ":{"roots":{}},"clientInfo":{"name":"t"}}`))
	if err != nil || strings.Contains(string(p), "sampling") || strings.Contains(string(p), "roots") || !strings.Contains(string(p), `"capabilities":{}`) {
		t.Fatalf("%s %v", p, err)
	}
	p, err = stripMetaCapabilities([]byte(`{"name":"echo","_META":{"Capabilities":{"sampling":{}},"progressToken":1}}`))
	if err != nil || strings.Contains(string(p), "sampling") || !strings.Contains(string(p), "progressToken") {
		t.Fatalf("%s %v", p, err)
	}
}
