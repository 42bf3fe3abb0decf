package toolbridge

import (
	"encoding/json"
	"testing"
)

func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(initBody))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if err != nil {
			return
		}
		if m.JSONRPC != "2.0" || (m.Method == "" && !hasID(m.ID)) {
			t.Fatalf("accepted %q", b)
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if m.isRequest() && m.isNotification() {
			t.Fatal("both a request and a notification")
		}
	})
}
