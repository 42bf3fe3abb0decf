package toolbridge

import (
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// A plain sandbox (lnk sandbox run with flags: no agent) is told the
// flags of lnk sandbox run that grant what was refused, never lnk agent
// allow with an empty agent's name; an agent's sandbox is told lnk agent
// allow with its name (the control).
func TestAPlainSandboxsHintNamesItsOwnFlags(t *testing.T) {
	for _, agent := range []string{"", "ada"} {
		r := newRig(t, map[string]caps.Tool{"test": {Allow: []string{"echo"}}, "other": {}}, Settings{})
		r.bridge.Agent = agent // before its first request
		wantCall, wantTool := "lnk sandbox run --tool test --allow delete -- COMMAND", "lnk sandbox run --tool absent -- COMMAND"
		if agent != "" {
			wantCall, wantTool = "lnk agent allow ada --tool test --allow delete", "lnk agent allow ada --tool absent"
		}
		sid := r.initSession()
		st, body := r.call(sid, "delete", "x")
		if st != 200 || !strings.Contains(body, wantCall) || strings.Contains(body, "allow  ") {
			t.Errorf("agent %q: a call not allowed by name: %d %s", agent, st, body)
		}
		st, _, body = r.post("absent", "", initBody)
		if st != 403 || !strings.Contains(body, "("+wantTool+")") {
			t.Errorf("agent %q: a tool not granted: %d %s", agent, st, body)
		}
		if h := allowHint(Question{Agent: agent, Tool: "test", Call: "delete"}); h != wantCall {
			t.Errorf("agent %q: the question's hint %q, want %q", agent, h, wantCall)
		}
	}
}
