package filetool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPendingCallsAnsweredAtEOF: a client that writes initialize and a
// call and closes its side gets the call's answer — the call still
// running when serve reads the end of its input (the sandboxed process
// answers only once serve is waiting for it) — with the fast path and
// without, and with notifications/initialized and without. The positive
// control is the initialize answer each time; a later call is answered
// too, so the wait is per call, not for the first only.
func TestPendingCallsAnsweredAtEOF(t *testing.T) {
	for _, fast := range []bool{true, false} {
		for _, initialized := range []bool{true, false} {
			gate := filepath.Join(t.TempDir(), "gate")
			testHookDrain = func() { os.WriteFile(gate, nil, 0o600) }
			t.Cleanup(func() { testHookDrain = nil })
			// Each call is answered only once the gate exists: once serve
			// read the end of its input with the calls pending.
			sb := &Sandboxed{Argv: []string{"/bin/sh", "-c",
				`while read call; do while [ ! -e "$0" ]; do sleep 0.01; done; echo '{"ok":{"answered":1}}'; done`, gate}}
			t.Cleanup(func() { sb.Close() })
			in, out := serveLines(t, Offer{}, sb, fast)
			lines := []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`}
			if initialized {
				lines = append(lines, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			lines = append(lines,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a"}}}`)
			if _, err := in.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
				t.Fatal(err)
			}
			in.Close()
			got := map[string]bool{}
			for {
				l, err := out.ReadString('\n')
				if err != nil {
					break
				}
				for _, id := range []string{"1", "2", "3"} {
					if strings.HasPrefix(l, `{"jsonrpc":"2.0","id":`+id+`,"result":`) {
						got[id] = true
						if id != "1" && !strings.Contains(l, `answered`) {
							t.Errorf("fast %v, initialized %v: call %s answered %s", fast, initialized, id, l)
						}
					}
				}
			}
			for _, id := range []string{"1", "2", "3"} {
				if !got[id] {
					t.Errorf("fast %v, initialized %v: no answer to %s once the client closed its side", fast, initialized, id)
				}
			}
		}
	}
}
