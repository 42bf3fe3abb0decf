package wayin

import (
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/toolname"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/store"
)

// Senders the way in hands on, by Link-From's prefix.
const (
	FromSchedule = "schedule:" // a job's firing: schedule:<job id>
	FromRun      = "run:"      // a background command's ending: run:<id>
	FromTask     = "task-"     // a subagent: task-<id>, in its own conversation
	FromWebhook  = "stranger:webhook:"
)

// kind is what a sender is, for the caps: a schedule's and a subagent's
// count toward per_day; a subagent's toward subagents at once.
type kind int

const (
	kindSchedule kind = iota
	kindRun
	kindTask
	kindWebhook
	kindEnding // a subagent's answer to its parent: counted at its start
)

// checkMessage refuses a message the way in doesn't hand: a Link-From
// naming no sender or one it doesn't take, a conversation not the
// sender's to write, hops past the agent's cap.
func checkMessage(m Message, hops int) (kind, error) {
	if err := endpoint.CheckFrom(m.From); err != nil {
		return 0, refusal.New("the message's Link-From " + quote(m.From) + " names no sender")
	}
	if err := store.CheckThread(m.Thread); err != nil {
		return 0, refusal.New("the message's conversation: " + err.Error())
	}
	if m.Text == "" {
		return 0, refusal.New("the message is empty")
	}
	if len(m.Text) > endpoint.MaxOthersMessage {
		return 0, refusal.New(fmt.Sprintf("the message is %d bytes, more than the %d a message from others may be", len(m.Text), endpoint.MaxOthersMessage))
	}
	var k kind
	switch {
	case strings.HasPrefix(m.From, FromSchedule):
		k = kindSchedule
	case strings.HasPrefix(m.From, FromRun):
		k = kindRun
	case strings.HasPrefix(m.From, FromTask):
		k = kindTask
		if m.Thread != m.From {
			return 0, refusal.New("a subagent's message goes only to its own conversation (" + m.From + "), not " + m.Thread)
		}
		if err := checkTask(m.Task); err != nil {
			return 0, err
		}
	case strings.HasPrefix(m.From, FromWebhook):
		k = kindWebhook
	default:
		// A teammate's message needs a team, which Link doesn't build yet:
		// no command would allow it, so the refusal names none.
		return 0, refusal.New("the way in hands on messages from the agent's schedules, subagents, background commands and webhooks, not from " + quote(m.From))
	}
	if k != kindTask && m.Task != nil {
		return 0, refusal.New("only a subagent's start (task-<id>) carries a tool list")
	}
	if why := conversation.NotOthers(m.From, m.Thread); why != "" {
		return 0, refusal.New(why) // the one rule, the harness's endpoint's too
	}
	if m.Hops > hops {
		return 0, &refusal.Refusal{Reason: fmt.Sprintf("hop %d is past the agent's cap ([tool.scheduler] hops = %d): a chain of messages ends there", m.Hops, hops),
			Hint: "raise [tool.scheduler] hops in the agent's Config/sandbox.toml"}
	}
	return k, nil
}

// checkTask refuses a subagent's start with no tool list (a harness
// that can't keep one is never sent a subagent, so one without a list
// would have every tool it was meant not to), with an answer bound for
// a conversation a subagent's may not reach, or with a tool's or a
// model's name that breaks internal/toolname's rule.
func checkTask(t *Task) error {
	switch {
	case t == nil || t.Tools == nil:
		return refusal.New("a subagent's start carries no tool list: it is never handed on with every tool")
	case store.CheckThread(t.Parent) != nil:
		return refusal.New("a subagent's start names no conversation its answer goes back to")
	case conversation.Strangers(t.Parent):
		return refusal.New("a subagent's answer never goes to a stranger's conversation (" + t.Parent + ")")
	}
	// The names Link Harness would refuse are refused here, before the
	// start counts against a cap or reaches the harness.
	if err := toolname.CheckTools(t.Tools); err != nil {
		return refusal.New("a subagent's start: " + err.Error())
	}
	if t.Model != "" {
		if err := toolname.CheckModel(t.Model); err != nil {
			return refusal.New("a subagent's start: " + err.Error())
		}
	}
	return nil
}

// quote is untrusted words for a refusal's one line.
func quote(s string) string {
	if len(s) > 140 {
		s = s[:140] + "…"
	}
	return fmt.Sprintf("%q", s)
}
