package askbroker

import (
	"errors"
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/wire"
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

// AskRequest is a question as it arrives on the broker's channel: every
// field present (agent may be empty), none other.
type AskRequest struct {
	What    string `json:"what"`
	Sandbox string `json:"sandbox"`
	Agent   string `json:"agent"`
	Call    string `json:"call"`
	Allow   string `json:"allow"`
	// Ref is the caller's name for the question, for [WithdrawAskSpec]
	// (the format of a question's id); empty for a question it never
	// withdraws.
	Ref string `json:"ref,omitempty"`
}

// Question checks r and returns it cleaned: what, sandbox, call and allow
// may not be empty, nor be once cleaned (a question showing nothing of
// what it allows is never asked).
func (r *AskRequest) Question() (*Question, error) {
	q := &Question{What: r.What, Sandbox: r.Sandbox, Agent: r.Agent, Call: r.Call, Allow: r.Allow}
	q.Clean()
	for _, f := range []struct{ name, v, shown string }{{"what", r.What, q.What}, {"sandbox", r.Sandbox, q.Sandbox}, {"call", r.Call, q.Call}, {"allow", r.Allow, q.Allow}} {
		switch {
		case strings.TrimSpace(f.v) == "":
			return nil, fmt.Errorf("%w: field %q is empty", ErrBadQuestion, f.name)
		case strings.TrimSpace(f.shown) == "":
			return nil, fmt.Errorf("%w: field %q shows nothing once control, bidi and invisible characters are removed", ErrBadQuestion, f.name)
		}
	}
	return q, nil
}

// DecodeQuestion reads one question strictly, as the channel does
// (wire.Unmarshal): a JSON object with exactly the fields of
// [AskRequest], each a string, at most [MaxQuestionBytes] — a missing,
// extra or repeated field is an error, as is an empty what, sandbox, call
// or allow. The result is cleaned.
func DecodeQuestion(b []byte) (*Question, error) {
	if len(b) > MaxQuestionBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrBadQuestion, len(b), MaxQuestionBytes)
	}
	var r AskRequest
	if err := wire.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuestion, err)
	}
	return r.Question()
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

// CallGutter starts each line of the call as a question shows it: the
// call's lines (text the sandbox controls) can never pass for Link's own,
// so a call holding "Link: … asks for …" or "Allow it once?" lines
// forges no second question.
const CallGutter = "  | "

// Text is the question as every way shows it: who asks and for what, the
// call, each line behind [CallGutter], and a last line that names again
// what is allowed, so a call too long for the screen still ends in
// Link's own words just above the answer.
func (q *Question) Text() string {
	var b strings.Builder
	who := "sandbox " + q.Sandbox
	if q.Agent != "" {
		who += " (agent " + q.Agent + ")"
	}
	fmt.Fprintf(&b, "Link: %s asks for a %s:\n", who, q.What)
	for _, l := range strings.Split(q.Call, "\n") {
		b.WriteString(CallGutter + l + "\n")
	}
	if q.Cut {
		b.WriteString(CutNote + "\n")
	}
	fmt.Fprintf(&b, "Allow this %s of %s once? Unanswered, it is refused. To allow it always: %s", q.What, who, q.Allow)
	return b.String()
}
