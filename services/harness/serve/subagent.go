package serve

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/store"
)

// isSubagent reports whether thread is a subagent's conversation.
func isSubagent(thread string) bool { return strings.HasPrefix(thread, "task-") }

// checkSubagentStart refuses, before anything is opened or made, a turn
// subagentScope would refuse in a subagent's conversation not kept yet:
// a message that brings no tool list, a model neither the agent's own
// nor one [model] allow names, a model whose client can't be made. Its
// conversation's folder is made only for a start that runs, so a refused
// start leaves nothing that counts as kept (endpoint: a later message
// into it is refused as no-conversation). A list for any other
// conversation is refused here too. What can't be looked at refuses.
func (a *Agent) checkSubagentStart(m endpoint.Message) error {
	if !isSubagent(m.Thread) {
		if m.Subagent != nil {
			return errors.New("a subagent's tool list comes only with its own conversation (task-<id>)")
		}
		return nil
	}
	kept, err := a.chats.Has(m.Thread)
	switch {
	case err != nil:
		return fmt.Errorf("whether the subagent's conversation is kept can't be read, so its turn doesn't run: %w", err)
	case kept:
		return nil // its kept list and model are read once it is open
	case m.Subagent == nil:
		return fmt.Errorf("conversation %s keeps no subagent's tool list: a subagent's conversation starts only with one", m.Thread)
	}
	if err := a.checkSubagentModel(m.Subagent.Model); err != nil {
		return err
	}
	_, err = a.runnerFor(m.Subagent.Model)
	return err
}

// subagentScope is what a turn in a subagent's conversation (task-<id>)
// may use: the tool list and model the conversation keeps. Its first
// message (the subagent's start, from the way in) brings them, and they
// are kept with the conversation (store.SubagentFile); every later
// message's turn reads them back, narrowed again by any list it brings,
// never widened: a tool granted to the agent later is not in the list,
// and a list can only lose names. A subagent's conversation keeping no
// list, a list that can't be read, a second model, or a model that is
// neither the agent's own nor one [model] allow names is refused: the
// turn never runs with every tool.
func (a *Agent) subagentScope(conv *store.Conversation, m endpoint.Message) (*store.Subagent, error) {
	if !isSubagent(m.Thread) {
		if m.Subagent != nil {
			return nil, errors.New("a subagent's tool list comes only with its own conversation (task-<id>)")
		}
		return nil, nil
	}
	kept, err := conv.Subagent()
	if err != nil {
		return nil, fmt.Errorf("the subagent's tool list can't be read, so its turn doesn't run: %w", err)
	}
	sent := m.Subagent
	switch {
	case kept == nil && sent == nil:
		return nil, fmt.Errorf("conversation %s keeps no subagent's tool list: a subagent's conversation starts only with one", m.Thread)
	case kept == nil:
		kept = &store.Subagent{Tools: dedupe(sent.Tools), Model: sent.Model}
		if err := a.checkSubagentModel(kept.Model); err != nil {
			return nil, err
		}
		if err := conv.KeepSubagent(kept); err != nil {
			return nil, fmt.Errorf("the subagent's tool list can't be kept, so its turn doesn't run: %w", err)
		}
	case sent != nil:
		if sent.Model != "" && sent.Model != kept.Model {
			return nil, fmt.Errorf("the subagent runs on the model it was started with (%s), not %s", orOwn(kept.Model), sent.Model)
		}
		if narrowed := intersect(kept.Tools, sent.Tools); len(narrowed) < len(kept.Tools) {
			kept.Tools = narrowed
			if err := conv.KeepSubagent(kept); err != nil {
				return nil, fmt.Errorf("the subagent's narrowed tool list can't be kept, so its turn doesn't run: %w", err)
			}
		}
	}
	if err := a.checkSubagentModel(kept.Model); err != nil {
		return nil, err
	}
	return kept, nil
}

// checkSubagentModel refuses a model neither the agent's own nor one
// [model] allow names.
func (a *Agent) checkSubagentModel(m string) error {
	if !caps.SubagentModelAllowed(a.cfg.Models, a.cfg.Model.Model, m) {
		return fmt.Errorf("model %q is neither the agent's own nor one its [model] allow names: a subagent runs on none other\nhint: add it to [model] allow in the agent's Config/sandbox.toml", m)
	}
	return nil
}

// narrowTools is the tools a turn gets: those the sender may have
// (toolsFor: nil every one), within the subagent's list when there is
// one.
func narrowTools(forSender []string, sub *store.Subagent) []string {
	if sub == nil {
		return forSender
	}
	if forSender == nil {
		return append([]string{}, sub.Tools...)
	}
	return intersect(sub.Tools, forSender)
}

// intersect is the names of a also in b, in a's order; never nil.
func intersect(a, b []string) []string {
	out := []string{}
	for _, n := range a {
		if slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

func dedupe(names []string) []string {
	out := []string{}
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func orOwn(m string) string {
	if m == "" {
		return "the agent's own"
	}
	return m
}
