package wayin

import (
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/services/harness/store"
)

// maxTold bounds the part of a subagent's answer told to its parent.
const maxTold = 16 << 10

// answerText gathers a subagent's answer as it streams, the first
// maxTold bytes of it.
type answerText struct {
	b   strings.Builder
	cut bool
}

func (a *answerText) add(t string) {
	if room := maxTold - a.b.Len(); len(t) > room {
		for room > 0 && room < len(t) && (t[room]&0xC0) == 0x80 {
			room-- // at a rune's start
		}
		t, a.cut = t[:max(room, 0)], true
	}
	a.b.WriteString(t)
}

func (a *answerText) String() string {
	if a.cut {
		return a.b.String() + "\n(the rest of the answer was cut)"
	}
	return a.b.String()
}

// tellParent hands a subagent's ending to the conversation that started
// it (m.Task.Parent), as a message from the subagent (task-<id>) one hop
// past its task, once: its answer, or why its turn failed or was never
// started (ran false). It runs on its own, so nothing waits on the
// parent's turn.
func (s *Server) tellParent(m Message, answer string, failed error, ran bool) {
	if m.Task == nil {
		return
	}
	var text string
	switch {
	case failed != nil && !ran:
		text = "The subagent was not started: " + failed.Error()
	case failed != nil:
		text = "The subagent's turn failed: " + failed.Error()
	case strings.TrimSpace(answer) == "":
		text = "The subagent ended without an answer."
	default:
		text = "The subagent's answer:\n" + answer
	}
	e := Message{From: m.From, Thread: m.Task.Parent, Text: text, Hops: m.Hops + 1}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.handAs(s.ctx, e, true)
	}()
}

// checkEnding refuses a subagent's ending the way in doesn't hand: from
// no subagent, into a conversation that is no conversation or a
// stranger's, or past the agent's hops.
func checkEnding(m Message, hops int) error {
	switch {
	case !strings.HasPrefix(m.From, FromTask) || m.Task != nil:
		return refusal.New("a subagent's ending comes from task-<id>, and carries no tool list")
	case store.CheckThread(m.Thread) != nil:
		return refusal.New("a subagent's ending names no conversation")
	case conversation.Strangers(m.Thread):
		return refusal.New("a subagent's answer never goes to a stranger's conversation (" + m.Thread + ")")
	case m.Hops > hops:
		return &refusal.Refusal{Reason: fmt.Sprintf("hop %d is past the agent's cap ([tool.scheduler] hops = %d): the subagent's answer is not told", m.Hops, hops),
			Hint: "raise [tool.scheduler] hops in the agent's Config/sandbox.toml"}
	}
	return nil
}
