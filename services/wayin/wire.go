package wayin

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/services/harness/endpoint"
)

// MaxRequest bounds a request's line, JSON and all: a message's text of
// endpoint.MaxOthersMessage (a webhook's post of 1 MiB) with every byte
// escaped as JSON escapes most (\u00XX, six bytes for one), and the rest.
const MaxRequest = 6*endpoint.MaxOthersMessage + 64<<10

// Request is a caller's line: the proof and the message.
type Request struct {
	AgentID string `json:"agent_id"`
	Answer  string `json:"answer"` // the proof's HMAC, hex
	Message
}

// Message is a message from others as the way in takes it.
type Message struct {
	From   string `json:"from"`
	Thread string `json:"thread"`
	Text   string `json:"text"`
	Hops   int    `json:"hops"`
	// Task is a subagent's start (From and Thread both task-<id>): its
	// tools and model, and the conversation its answer goes back to.
	Task *Task `json:"task,omitempty"`
}

// Task is a subagent's start as the way in hands it on.
type Task struct {
	Parent string `json:"parent"`
	// Tools are the granted names of its tools; never null ([] is none):
	// a subagent is never handed on without its list.
	Tools []string `json:"tools"`
	Model string   `json:"model,omitempty"`
}

// Hello is the way in's first line: the challenge the caller answers.
type Hello struct {
	Challenge string `json:"challenge"`
}

// Reply is the way in's last line.
type Reply struct {
	Taken bool   `json:"taken,omitempty"`
	Again bool   `json:"again,omitempty"` // taken already, before this call
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
	// Rule names a refusal's rule its caller acts on: only
	// conversation.RuleMissing (the conversation is gone),
	// refusal.RuleBusy (refused for now), or "".
	Rule string `json:"rule,omitempty"`
}

// ReadRequest reads one request line: at most MaxRequest bytes ending in
// a newline, exactly one JSON object with each known field once and no
// other.
func ReadRequest(r *bufio.Reader) (*Request, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	var q Request
	if err := decodeStrict(line, &q); err != nil {
		return nil, err
	}
	if q.Hops < 0 {
		return nil, errors.New("the request's hops are negative")
	}
	return &q, nil
}

// readLine is one line of at most MaxRequest bytes, without its newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		part, err := r.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > MaxRequest {
			return nil, fmt.Errorf("the request is larger than %d bytes", MaxRequest)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, errors.New("the request ended before its newline")
		default:
			return nil, err
		}
	}
}

// decodeStrict reads data as exactly one JSON object into v
// (jsonscan.Strict: every field once, in lower case, none unknown,
// nothing after).
func decodeStrict(data []byte, v any) error {
	if err := jsonscan.Strict(data, v); err != nil {
		return fmt.Errorf("the request is not the JSON object the way in takes: %w", err)
	}
	return nil
}

// writeLine writes v as one JSON line.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
