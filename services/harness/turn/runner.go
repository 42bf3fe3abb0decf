package turn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/prompt"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/harness/tools"
)

// Limits are the spec's numbers for a turn.
type Limits struct {
	Rounds        int // 8: rounds of calls a turn
	CallsPerRound int // 16: calls a round; the model's others are dropped
	AnswerBytes   int // 32 KiB kept of each call's answer
	NotesRounds   int // 4: rounds of memory__remember before a summary
}

// DefaultLimits are the spec's.
func DefaultLimits() Limits {
	return Limits{Rounds: 8, CallsPerRound: 16, AnswerBytes: 32 << 10, NotesRounds: 4}
}

// Config is what a [Runner] is made of.
type Config struct {
	Model     model.Client
	ModelName string // the model's name: its window, and each answer's record
	// Window is the model's context in tokens; 0: model.WindowTokens(ModelName).
	Window int
	// MaxTokens is the room left for the model's answer; 0: model.DefaultMaxTokens.
	MaxTokens int
	Tools     *tools.Set     // nil: no tools
	Prompt    *prompt.Source // nil: no prompt files
	// Head is the system prompt's start; "" is DefaultHead.
	Head   string
	Limits Limits
	Logf   func(format string, args ...any)
	Now    func() time.Time
}

// Runner runs turns; one Runner serves every conversation of its agent.
type Runner struct {
	c Config
}

// New checks c and makes the Runner.
func New(c Config) (*Runner, error) {
	if c.Model == nil {
		return nil, errors.New("turn: no model")
	}
	z := DefaultLimits()
	if c.Limits.Rounds <= 0 {
		c.Limits.Rounds = z.Rounds
	}
	if c.Limits.CallsPerRound <= 0 {
		c.Limits.CallsPerRound = z.CallsPerRound
	}
	if c.Limits.AnswerBytes <= 0 {
		c.Limits.AnswerBytes = z.AnswerBytes
	}
	if c.Limits.NotesRounds <= 0 {
		c.Limits.NotesRounds = z.NotesRounds
	}
	if c.Window <= 0 {
		c.Window = model.WindowTokens(c.ModelName)
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = model.DefaultMaxTokens
	}
	if c.Head == "" {
		c.Head = DefaultHead
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Runner{c: c}, nil
}

// Incoming is one message for a turn.
type Incoming struct {
	Text  string
	From  string   // "" the owner; else the sender (others)
	Hops  int      // the message's hops, sent on in every call's _meta
	Tools []string // nil: every tool; else only these (a subagent's, a stranger's: none)
	// Queued is the message's number in the conversation's inbox when it
	// is run from there (0: it was not queued), kept on its event so a
	// restart knows it ran.
	Queued int64
}

// Answer is a turn's outcome.
type Answer struct {
	Text   string
	Seq    int64 // the answer's event number
	Rounds int   // rounds of calls made
	Calls  int   // calls made (sent or answered as errors)
}

// Turn appends in to conv, runs the model and its tool calls (at most 8
// rounds of 16), appends the answer, and returns it. onText, if not nil,
// gets the answer's text as it streams.
func (r *Runner) Turn(ctx context.Context, conv *store.Conversation, thread string, in Incoming, onText func(string)) (Answer, error) {
	if err := checkIncoming(in); err != nil {
		return Answer{}, err
	}
	t := &turn{r: r, conv: conv, thread: thread, in: in, onText: onText}
	if _, err := t.append(&store.Event{Kind: "message", From: in.From, Text: in.Text, Hops: in.Hops, Queued: in.Queued}); err != nil {
		return Answer{}, err
	}
	system, err := r.system()
	if err != nil {
		return Answer{}, err
	}
	t.system = system
	if r.c.Tools != nil {
		t.tools = r.c.Tools.Begin(ctx, tools.Scope{Thread: thread, Hops: in.Hops, Tools: in.Tools, Model: r.c.ModelName})
		defer t.tools.End()
	}
	return t.run(ctx)
}

// system is the system prompt: the head, then the agent's files.
func (r *Runner) system() (string, error) {
	if r.c.Prompt == nil {
		return r.c.Head, nil
	}
	p, err := r.c.Prompt.Read()
	if err != nil {
		return "", fmt.Errorf("turn: the prompt: %w", err)
	}
	return p.Text(r.c.Head), nil
}

// checkIncoming refuses a message a turn can't take.
func checkIncoming(in Incoming) error {
	if in.Text == "" {
		return errors.New("turn: an empty message")
	}
	if in.Hops < 0 {
		return errors.New("turn: a message with negative hops")
	}
	for _, c := range in.From {
		if c < 0x20 || c == 0x7f {
			return errors.New("turn: a sender's name with a control character")
		}
	}
	return nil
}
