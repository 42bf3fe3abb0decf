package askbroker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxQuestionBytes caps one question as it arrives.
const MaxQuestionBytes = 64 << 10

// A Question is what a sandbox's bridge asks the owner: what asks (a
// tool's call, a page), for which sandbox and agent, the exact call or
// page, and the --allow that would let it through. Its fields are
// untrusted text until [Question.Clean] has run.
type Question struct {
	What    string `json:"what"`    // "mcp call", "page", … one line
	Sandbox string `json:"sandbox"` // the sandbox that asks, one line
	Agent   string `json:"agent"`   // the agent running it; empty for none
	Call    string `json:"call"`    // the exact call or page, as it is
	Allow   string `json:"allow"`   // the lnk command that would allow it, one line
	Cut     bool   `json:"cut"`     // set by Clean: something was cut
}

// ErrBadQuestion is returned for a question that does not decode strictly.
var ErrBadQuestion = errors.New("malformed question")

var questionFields = []string{"what", "sandbox", "agent", "call", "allow"}

// DecodeQuestion reads one question strictly: a JSON object with exactly
// the fields what, sandbox, agent, call and allow, each a string, at most
// [MaxQuestionBytes] — a missing, extra or repeated field is an error, as
// is an empty what, sandbox, call or allow. The result is cleaned.
func DecodeQuestion(b []byte) (*Question, error) {
	if len(b) > MaxQuestionBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrBadQuestion, len(b), MaxQuestionBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadQuestion)
	}
	got := map[string]string{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadQuestion, err)
		}
		key, _ := k.(string)
		if _, dup := got[key]; dup {
			return nil, fmt.Errorf("%w: field %q twice", ErrBadQuestion, key)
		}
		known := false
		for _, f := range questionFields {
			known = known || f == key
		}
		if !known {
			return nil, fmt.Errorf("%w: unknown field %q", ErrBadQuestion, key)
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: field %q is not a string", ErrBadQuestion, key)
		}
		got[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuestion, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("%w: data after the object", ErrBadQuestion)
	}
	for _, f := range questionFields {
		if _, ok := got[f]; !ok {
			return nil, fmt.Errorf("%w: missing field %q", ErrBadQuestion, f)
		}
		if f != "agent" && strings.TrimSpace(got[f]) == "" {
			return nil, fmt.Errorf("%w: field %q is empty", ErrBadQuestion, f)
		}
	}
	q := &Question{What: got["what"], Sandbox: got["sandbox"], Agent: got["agent"], Call: got["call"], Allow: got["allow"]}
	q.Clean()
	return q, nil
}

// Clean makes every field showable: the call keeps its lines, every other
// field becomes one line; Cut records that anything was cut.
func (q *Question) Clean() {
	var cut bool
	one := func(s string) string {
		s, c1 := Clean(s)
		s, c2 := Clean(strings.ReplaceAll(s, "\n", " "))
		cut = cut || c1 || c2
		return s
	}
	q.What, q.Sandbox, q.Agent, q.Allow = one(q.What), one(q.Sandbox), one(q.Agent), one(q.Allow)
	call, cut2 := Clean(q.Call)
	q.Call, q.Cut = call, q.Cut || cut || cut2
}

// Text is the question as every way shows it.
func (q *Question) Text() string {
	var b strings.Builder
	who := "sandbox " + q.Sandbox
	if q.Agent != "" {
		who += " (agent " + q.Agent + ")"
	}
	fmt.Fprintf(&b, "Link: %s asks for a %s:\n%s\n", who, q.What, q.Call)
	if q.Cut {
		b.WriteString(CutNote + "\n")
	}
	fmt.Fprintf(&b, "Allow it once? Unanswered, it is refused. To allow it always: %s", q.Allow)
	return b.String()
}
