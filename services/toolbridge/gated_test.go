package toolbridge

import (
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// resources/read and prompts/get go through only as a tools/call does:
// by --allow with their method's name (or --ask none), or else asked;
// refused when the owner says no, passed when yes.
func TestResourcesReadAndPromptsGetAsk(t *testing.T) {
	for _, c := range []struct {
		call, body, want, shown string
	}{
		{"resources/read", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://note"}}`, "the note's text", "test://note"},
		{"prompts/get", `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"ada"}}}`, "the prompt's greeting", `{"who":"ada"}`},
	} {
		t.Run(c.call, func(t *testing.T) {
			// The resource's uri or the prompt's name allows nothing: only
			// the method's name does.
			r := newRig(t, map[string]caps.Tool{"test": {Allow: []string{"test://note", "greet"}}}, Settings{})
			asker := &recordingAsker{yes: false}
			r.bridge.Asker = asker
			sid := r.initSession()
			st, _, body := r.post("test", sid, c.body)
			if st != 200 || !strings.Contains(body, "the owner said no") || strings.Contains(body, c.want) {
				t.Fatalf("%s the owner refused: %d %s", c.call, st, body)
			}
			if len(asker.qs) != 1 || asker.qs[0].Call != c.call || asker.qs[0].Arguments != c.shown {
				t.Fatalf("%s asked %+v, want once, as %s %s", c.call, asker.qs, c.call, c.shown)
			}
			if r.bridge.Refused() != 1 {
				t.Errorf("refused calls counted %d, want 1", r.bridge.Refused())
			}
			asker.yes = true
			if st, _, body := r.post("test", sid, c.body); st != 200 || !strings.Contains(body, c.want) {
				t.Fatalf("%s the owner allowed: %d %s", c.call, st, body)
			}

			r = newRig(t, map[string]caps.Tool{"test": {Allow: []string{c.call}}}, Settings{})
			asker = &recordingAsker{}
			r.bridge.Asker = asker
			sid = r.initSession()
			if st, _, body := r.post("test", sid, c.body); st != 200 || !strings.Contains(body, c.want) {
				t.Fatalf("%s with --allow %s: %d %s", c.call, c.call, st, body)
			}
			if len(asker.qs) != 0 {
				t.Errorf("%s with --allow %s asked %+v", c.call, c.call, asker.qs)
			}
		})
	}
}
