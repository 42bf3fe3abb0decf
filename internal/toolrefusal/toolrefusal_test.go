package toolrefusal

import (
	"encoding/json"
	"testing"
)

// A refusal reads only from an error result whose _meta names a reason;
// the same words in the content, a result not an error, a key of
// another type or an answer that is not JSON read as none.
func TestReason(t *testing.T) {
	meta, _ := json.Marshal(Meta("curl: not in the agent's [commands]"))
	for _, c := range []struct {
		answer string
		want   string
		ok     bool
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{"_meta":` + string(meta) + `,"content":[{"type":"text","text":"x"}],"isError":true}}`, "curl: not in the agent's [commands]", true},
		{`{"jsonrpc":"2.0","id":3,"result":{"_meta":` + string(meta) + `,"content":[]}}`, "", false},
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"link.local/refused\": \"x\""}],"isError":true}}`, "", false},
		{`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"link.local/refused":7},"content":[],"isError":true}}`, "", false},
		{`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"link.local/refused":" "},"content":[],"isError":true}}`, "", false},
		{`{"link.local/refused"`, "", false},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"},"_meta":{"link.local/refused":"x"}}`, "", false},
	} {
		why, ok := Reason([]byte(c.answer))
		if why != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.answer, why, ok, c.want, c.ok)
		}
	}
}

// FuzzReason: any answer bytes read without a panic, and a refusal read
// always has a reason.
func FuzzReason(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		if why, ok := Reason(b); ok && why == "" {
			t.Fatal("a refusal without a reason")
		}
	})
}
