package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Queued is one message from others kept in a conversation's inbox
// (inbox.jsonl) while the conversation's turn ran: everything its turn
// needs, as it was checked when it arrived.
type Queued struct {
	ID    int64    `json:"id"`    // random, above 0, unique in the inbox; its event's Queued once run
	From  string   `json:"from"`  // the sender, as the endpoint took it
	Hops  int      `json:"hops"`  // its hops
	Tools []string `json:"tools"` // null: every tool; else only these (a stranger's: [] unless [tools] strangers names some)
	Text  string   `json:"text"`
}

// doneMark is an inbox line saying a queued message ran.
type doneMark struct {
	Done int64 `json:"done"`
}

var (
	queuedKeys = keySet{"id": nil, "from": nil, "hops": nil, "tools": nil, "text": nil}
	doneKeys   = keySet{"done": nil}
)

// ParseInbox reads an inbox's bytes: the messages queued and not yet
// marked done, in the order they came, and the length of its whole lines
// (a last line with no newline is torn: a queueing cut short, never
// answered taken, and not a message). Anything else that is not one
// queued message or one done mark of a message before it is refused:
// the file lies in the agent's folder, where its run calls may write.
func ParseInbox(data []byte) (pending []Queued, whole int, err error) {
	if len(data) > MaxInbox+maxInboxLine {
		return nil, 0, fmt.Errorf("%s is past %d bytes", inboxName, MaxInbox)
	}
	state := map[int64]bool{} // id: done
	var order []Queued
	torn, err := readLines(bytes.NewReader(data), maxInboxLine, func(line []byte) error {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			return fmt.Errorf("%s: a line that is not a JSON object", inboxName)
		}
		if _, ok := probe["done"]; ok {
			if err := checkKeys(line, doneKeys, " in "+inboxName); err != nil {
				return err
			}
			var d doneMark
			if err := json.Unmarshal(line, &d); err != nil {
				return fmt.Errorf("%s: a done mark that is not one", inboxName)
			}
			done, known := state[d.Done]
			switch {
			case !known:
				return fmt.Errorf("%s: a done mark of no message before it", inboxName)
			case done:
				return fmt.Errorf("%s: message %d marked done twice", inboxName, d.Done)
			}
			state[d.Done] = true
			return nil
		}
		if err := checkKeys(line, queuedKeys, " in "+inboxName); err != nil {
			return err
		}
		var q Queued
		if err := json.Unmarshal(line, &q); err != nil {
			return fmt.Errorf("%s: a queued message that is not one", inboxName)
		}
		if err := q.check(); err != nil {
			return err
		}
		if _, seen := state[q.ID]; seen {
			return fmt.Errorf("%s: message %d queued twice", inboxName, q.ID)
		}
		state[q.ID] = false
		order = append(order, q)
		if len(order) > maxInboxLines {
			return fmt.Errorf("%s holds more than %d lines", inboxName, maxInboxLines)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrLineTooLong) {
			return nil, 0, fmt.Errorf("%s: a line past %d bytes", inboxName, maxInboxLine)
		}
		return nil, 0, err
	}
	for _, q := range order {
		if !state[q.ID] {
			pending = append(pending, q)
		}
	}
	return pending, len(data) - len(torn), nil
}

// check refuses a queued message its turn could not take.
func (q *Queued) check() error {
	switch {
	case q.ID < 1:
		return fmt.Errorf("%s: a message numbered %d (numbers are above 0)", inboxName, q.ID)
	case q.From == "" || len(q.From) > 256:
		return fmt.Errorf("%s: message %d names no sender", inboxName, q.ID)
	case q.Hops < 0:
		return fmt.Errorf("%s: message %d has negative hops", inboxName, q.ID)
	case q.Text == "" || len(q.Text) > MaxQueuedText:
		return fmt.Errorf("%s: message %d's text is empty or past %d bytes", inboxName, q.ID, MaxQueuedText)
	}
	for _, c := range q.From {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%s: message %d's sender holds a control character", inboxName, q.ID)
		}
	}
	for _, t := range q.Tools {
		if t == "" {
			return fmt.Errorf("%s: message %d names an empty tool", inboxName, q.ID)
		}
	}
	return nil
}
