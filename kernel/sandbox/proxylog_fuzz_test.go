package sandbox

import (
	"strings"
	"testing"

	"lnk.dev/lnk/internal/audit"
)

// FuzzProxyLogEntry feeds lines to the reading of what the proxy says on
// its stderr (the kernel's, for an agent's run, and lnk's, for flag
// grants): it never panics; a line is an entry only when it is an event
// with a decision; a refusal is logged as one, with its rule; and the
// entry's route names the event's host and nothing else.
func FuzzProxyLogEntry(f *testing.F) {
	for _, s := range []string{
		`{"kind":"connect","host":"api.example.com","port":443,"decision":"allow","bytes_up":10,"bytes_down":20}`,
		`{"kind":"request","host":"evil.example","decision":"refuse","rule":"internet","reason":"host not granted"}`,
		`{"kind":"connect","decision":""}`,
		`lnk-netbroker: landlock: not supported (--degraded runs without it)`,
		`{"decision":"refuse","host":"a\u0000b","port":65535}`,
		`{"decision":"allow"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := ProxyLogEntry(line, "demo")
		if !ok {
			return
		}
		if e.Agent != "demo" || !strings.HasPrefix(e.Request, "net ") {
			t.Fatalf("entry %+v of %q: the agent or request is not the proxy's", e, line)
		}
		if e.Kind != audit.KindUse && e.Kind != audit.KindRefuse {
			t.Fatalf("entry %+v of %q: kind %q", e, line, e.Kind)
		}
	})
}
