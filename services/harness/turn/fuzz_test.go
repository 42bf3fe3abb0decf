package turn

import (
	"encoding/json"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
)

// FuzzMessages feeds a log's events, as the model and tools left them
// (call ids, names, texts of their choosing, answers out of order or
// missing), to the window's messages. Whatever they hold: with tools
// offered, every call is answered by exactly one tool message before the
// next message that isn't one, and every tool message answers a call of
// the assistant message before it; with none offered, no tool message or
// call is sent; a message from others or a tool's answer written into the
// text never has a line that isn't quoted after its first, wherever a
// line breaks (anyBreak: \r, NEL, LS … too).
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`[{"seq":1,"kind":"message","text":"run ls"},{"seq":2,"kind":"answer","calls":[{"id":"a","name":"run__command"}]},{"seq":3,"kind":"tool_result","from":"run","call_id":"a","text":"x\ny"}]`), true)
	f.Add([]byte(`[{"seq":1,"kind":"tool_result","call_id":"zz","text":"orphan"},{"seq":2,"kind":"answer","calls":[{"id":"a","name":"n"},{"id":"a","name":"n"}]},{"seq":3,"kind":"message","from":"schedule:x","text":"a\nb"}]`), true)
	f.Add([]byte(`[{"seq":1,"kind":"answer","calls":[{"id":"a","name":"n"}]},{"seq":2,"kind":"tool_result","call_id":"a","text":"1"},{"seq":3,"kind":"tool_result","call_id":"a","text":"2"}]`), false)
	f.Fuzz(func(t *testing.T, data []byte, offered bool) {
		var events []store.Event
		if json.Unmarshal(data, &events) != nil || len(events) > 200 {
			return
		}
		msgs := messages(events, map[int64]bool{}, offered)
		var pending map[string]int // call id → answers still owed
		for i, m := range msgs {
			if !offered && (m.Role == model.ToolRole || len(m.ToolCalls) > 0) {
				t.Fatalf("message %d: a tool message or call with no tools offered", i)
			}
			if m.Role == model.ToolRole {
				if pending == nil || pending[m.ToolCallID] == 0 {
					t.Fatalf("message %d answers call %q, not one the assistant before it made", i, m.ToolCallID)
				}
				pending[m.ToolCallID]--
				continue
			}
			for id, n := range pending {
				if n > 0 {
					t.Fatalf("call %q left unanswered before message %d", id, i)
				}
			}
			pending = nil
			if m.Role == model.Assistant && len(m.ToolCalls) > 0 {
				pending = map[string]int{}
				for _, c := range m.ToolCalls {
					pending[c.ID] = 1 // a second call of one id is owed nothing more
				}
			}
			if m.Role == model.User && (strings.HasPrefix(m.Text, "A message from ") || strings.HasPrefix(m.Text, "The tool ")) {
				lines := anyBreak(m.Text)
				for _, l := range lines[1:] {
					if !strings.HasPrefix(l, "> ") {
						t.Fatalf("an unquoted line %q in %q", l, m.Text)
					}
				}
			}
		}
	})
}
