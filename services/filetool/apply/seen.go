package apply

import (
	"bytes"
	"fmt"

	"lnk.dev/lnk/internal/wire"
)

// A session's versions outlive its process. serve keeps the version of
// each file the session read or wrote, as the answers said it, and hands
// them to a process it starts again (after one ended, or was killed for
// a cancelled call or a bad answer) in seen lines before its first call:
//
//	{"seen":{"notes.md":"<version>",…}}
//
// A seen line is taken only before the first call; after it, it is not a
// call line and is answered as one. It is serve's, never the agent's:
// the agent reaches only serve's MCP calls, each of which serve writes as
// a call line of its own. It gets no answer.

// seenPrefix starts a seen line.
var seenPrefix = []byte(`{"seen":`)

// isSeenLine reports whether line is spelt as a seen line.
func isSeenLine(line []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(line), seenPrefix) }

// takeSeen adds a seen line's versions to the session's, decoding it
// strictly (wire.Unmarshal): one object with one field, seen, once and
// in its case, of clean relative names to versions.
func (s *Session) takeSeen(line []byte) error {
	var h struct {
		Seen map[string]string `json:"seen"`
	}
	if err := wire.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("not a seen line: %v", err)
	}
	for name, v := range h.Seen {
		if err := checkName("seen", name); err != nil {
			return err
		}
		if v == "" || v == "absent" {
			return fmt.Errorf("seen %q: no version", name)
		}
	}
	for name, v := range h.Seen {
		s.seen[name] = v
	}
	return nil
}
