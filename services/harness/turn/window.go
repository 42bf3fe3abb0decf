package turn

import (
	"encoding/json"
	"sort"
	"strings"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
)

// The kinds of events a turn writes.
const (
	kindMessage    = "message"
	kindAnswer     = "answer"
	kindToolResult = "tool_result"
	kindSummary    = "summary"
)

// harnessFrom names the harness as the author of a call's answer it made
// itself (a call not offered, dropped or refused): never "", the owner.
const harnessFrom = "link-harness"

// lastSummary is the log's latest summary ("" for none) and the index
// of the first event that stayed in the window it made (0 for none, or
// when that event is gone).
func lastSummary(events []store.Event) (string, int) {
	for k := len(events) - 1; k >= 0; k-- {
		e := events[k]
		if e.Kind != kindSummary {
			continue
		}
		base := 0
		if e.Window != nil {
			j := sort.Search(len(events), func(j int) bool { return events[j].Seq >= e.Window.Seq })
			if j < len(events) && events[j].Seq == e.Window.Seq {
				base = j
			}
		}
		return e.Text, base
	}
	return "", 0
}

// notesSpan marks the events of each summary's notes rounds (the answers
// and call answers right before it, back to the message that started its
// turn): they are not in any later window.
func notesSpan(events []store.Event) map[int64]bool {
	skip := map[int64]bool{}
	for k, e := range events {
		if e.Kind != kindSummary {
			continue
		}
		for j := k - 1; j >= 0 && (events[j].Kind == kindAnswer || events[j].Kind == kindToolResult); j-- {
			skip[events[j].Seq] = true
		}
	}
	return skip
}

// messages makes the log's events the model's messages. With tools
// offered, calls and their answers are the model's own calls and the
// tools' messages; without, they are written into the text, the tools'
// answers quoted. A call whose answer never came is answered as such; an
// answer whose call is out of the window is written into the text.
func messages(events []store.Event, skip map[int64]bool, toolsOffered bool) []model.Message {
	var out []model.Message
	calls := map[string]string{} // call id → name, for the calls in the window
	answered := map[string]bool{}
	for _, e := range events {
		if skip[e.Seq] {
			continue
		}
		switch e.Kind {
		case kindMessage:
			flushMissing(&out, calls, answered, toolsOffered)
			if e.From == "" {
				out = append(out, model.Message{Role: model.User, Text: e.Text})
			} else {
				out = append(out, model.Message{Role: model.User, Text: fromOthers(e.From, e.Text)})
			}
		case kindAnswer:
			flushMissing(&out, calls, answered, toolsOffered)
			m := model.Message{Role: model.Assistant, Text: e.Text}
			for _, c := range e.Calls {
				if toolsOffered {
					m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
				} else {
					m.Text = appendLine(m.Text, "(I called "+cleanName(c.Name)+" with "+compactJSON(c.Arguments)+".)")
				}
				calls[c.ID] = c.Name
			}
			if m.Text == "" && len(m.ToolCalls) == 0 {
				continue
			}
			out = append(out, m)
		case kindToolResult:
			name, inWindow := calls[e.CallID]
			if toolsOffered && inWindow && !answered[e.CallID] {
				answered[e.CallID] = true
				out = append(out, model.Message{Role: model.ToolRole, Text: e.Text, ToolCallID: e.CallID, ToolName: name})
				continue
			}
			flushMissing(&out, calls, answered, toolsOffered) // written as text: the calls before it are answered first
			answered[e.CallID] = true
			out = append(out, model.Message{Role: model.User, Text: toolAnswerText(e.From, nameOr(name, e.CallID), e.Text)})
		}
	}
	flushMissing(&out, calls, answered, toolsOffered)
	return out
}

// flushMissing answers, as the harness, each call in the window whose
// answer never came (a turn cut short): a provider takes no call left
// unanswered. Called before the next message that isn't a call's answer.
func flushMissing(out *[]model.Message, calls map[string]string, answered map[string]bool, toolsOffered bool) {
	if !toolsOffered || len(*out) == 0 {
		return
	}
	var pending []model.ToolCall
	// The calls of the last assistant message with calls, in order.
	for k := len(*out) - 1; k >= 0; k-- {
		m := (*out)[k]
		if m.Role == model.Assistant && len(m.ToolCalls) > 0 {
			pending = m.ToolCalls
			break
		}
		if m.Role != model.ToolRole {
			break
		}
	}
	for _, c := range pending {
		if !answered[c.ID] {
			answered[c.ID] = true
			*out = append(*out, model.Message{Role: model.ToolRole, ToolCallID: c.ID, ToolName: c.Name,
				Text: "[Link Harness: no answer to this call was recorded; the turn that made it ended first]"})
		}
	}
}

func nameOr(name, id string) string {
	if name != "" {
		return name
	}
	return "with id " + id
}

func appendLine(s, line string) string {
	if s == "" {
		return line
	}
	return s + "\n" + line
}

// compactJSON is a call's arguments on one line, cut for the text.
func compactJSON(raw json.RawMessage) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if s == "" {
		s = "{}"
	}
	if c, was := cut(s, 512); was {
		return c + "…"
	}
	return s
}
