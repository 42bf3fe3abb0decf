package toolbridge

import (
	"fmt"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// asOwn serves the tests' server as well under run-x, a name only Link's
// own run tool takes (owntools, in the real bridge).
type asOwn struct{ tooldef.Store }

func (a asOwn) Load(name string) (*tooldef.Definition, error) {
	if name != "run-x" {
		return a.Store.Load(name)
	}
	d, err := a.Store.Load("test")
	if err != nil {
		return nil, err
	}
	d.Name = name
	return d, nil
}

// TestOwnToolsRefusalsLogged: a call Link's own run tool refused by its
// own rules (its result's _meta link.local/refused) is one "refused"
// line with the tool's reason, counted toward a pause; a call it answered
// beside it (the positive control) passes; an added tool saying the same
// can't make its call a refusal.
func TestOwnToolsRefusalsLogged(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"run-x": {AskNone: true}, "test": {AskNone: true}}, Settings{}, "LNK_TEST_REFUSE=1")
	r.bridge.Defs = asOwn{r.store}
	why := "curl: not in the agent's [commands]"
	for _, c := range []struct{ tool, call, want string }{
		{"run-x", "refuse", "refused: " + why},
		{"run-x", "echo", "passed"},
		{"test", "refuse", "passed"},
	} {
		st, sid, body := r.post(c.tool, "", initBody)
		if st != 200 || sid == "" {
			t.Fatalf("initialize %s: %d %s", c.tool, st, body)
		}
		r.post(c.tool, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		st, _, body = r.post(c.tool, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, c.call, why))
		if st != 200 || !strings.Contains(body, `"id":5`) {
			t.Fatalf("%s %s: %d %s", c.tool, c.call, st, body)
		}
		var got []string
		for _, e := range r.logged() {
			if e.Tool == c.tool && e.Call == c.call {
				got = append(got, e.Outcome)
			}
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s %s logged %q, want once %q", c.tool, c.call, got, c.want)
		}
	}
	if n := r.bridge.Refused(); n != 1 {
		t.Errorf("refused calls counted %d, want 1", n)
	}
}
