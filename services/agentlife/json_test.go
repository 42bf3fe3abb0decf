package agentlife

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStartRestartStopJSON: start, restart and stop each print JSON
// with --json, read back: a start says it runs in the background under
// a supervisor; a restart runs under another; a stop says it was running
// and runs no more, and a second stop that it was not. status --json
// agrees with each (the control that the JSON says what is so).
func TestStartRestartStopJSON(t *testing.T) {
	w := newWorld(t, "js", "listen")
	var s status
	decode := func(out string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
	}
	decode(w.mustLnk("agent", "start", w.agent, "--json"), &s)
	if !s.Running || s.Mode != ModeBackground || s.Supervisor == 0 || !s.Sandbox {
		t.Fatalf("start --json %+v, want running in the background, sandboxed", s)
	}
	if now := w.status(); now.Supervisor != s.Supervisor {
		t.Fatalf("status %+v after start --json %+v", now, s)
	}
	w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
	var r status
	decode(w.mustLnk("agent", "restart", w.agent, "--json"), &r)
	if !r.Running || r.Mode != ModeBackground || r.Supervisor == 0 || r.Supervisor == s.Supervisor {
		t.Fatalf("restart --json %+v, want running under a supervisor other than %d", r, s.Supervisor)
	}
	var stop struct {
		Agent      string `json:"agent"`
		WasRunning bool   `json:"was_running"`
		Running    bool   `json:"running"`
	}
	decode(w.mustLnk("agent", "stop", w.agent, "--json"), &stop)
	if stop.Agent != w.agent || !stop.WasRunning || stop.Running {
		t.Fatalf("stop --json %+v", stop)
	}
	if now := w.status(); now.Running {
		t.Fatalf("status after stop: %+v", now)
	}
	decode(w.mustLnk("agent", "stop", w.agent, "--json"), &stop)
	if stop.WasRunning || stop.Running {
		t.Fatalf("a second stop --json %+v", stop)
	}
}
