package builtin

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/internal/textsafe"
)

// reply is what the model answers: words, or calls.
type reply struct {
	text  string
	calls []ToolCall
}

// Quoting a tool's answer: its first lines, each cut.
const (
	quoteLines    = 5
	quoteLineSize = 240
	echoSize      = 200
)

// answer applies the rules to req. seed (the request's hash) makes the
// calls' ids.
func answer(req *Request, obedient bool, seed [32]byte) reply {
	offered := map[string]*Tool{}
	only, none := req.toolChoice()
	for i := range req.Tools {
		if n := req.Tools[i].Function.Name; !none && (only == "" || n == only) {
			offered[n] = &req.Tools[i]
		}
	}
	var in *instruction
	if obedient {
		in = pendingInstruction(req.Messages)
	} else if last := lastUser(req.Messages); last >= 0 && !toolAnswersLast(req.Messages) {
		in = firstLineInstruction(req.Messages[last].Text())
	}
	if in != nil {
		return act(in, offered, seed)
	}
	if toolAnswersLast(req.Messages) {
		return reply{text: quoteToolAnswers(req.Messages)}
	}
	said := ""
	if last := lastUser(req.Messages); last >= 0 {
		said = cut(firstLine(subagentTask(req.Messages[last].Text())), echoSize)
	}
	return reply{text: fmt.Sprintf("I am Link's built-in model, and I answer from rules. You said: %q. Ask me to run, start, read, write, list files, remember, search, remind you in N minutes, or start a subagent.", said)}
}

// act makes in's call, if it is offered and its arguments fit; else says
// why not in words.
func act(in *instruction, offered map[string]*Tool, seed [32]byte) reply {
	if in.bad != "" {
		return reply{text: in.bad}
	}
	t, ok := offered[in.call]
	if !ok {
		return reply{text: fmt.Sprintf("I have no tool %s here, so I can't do %q.", in.call, cut(in.said, echoSize))}
	}
	s, err := parseSchema(t.Function.Parameters)
	if err == nil {
		args := in.arguments(s)
		if err = s.check("arguments", args); err == nil {
			b, _ := json.Marshal(args)
			return reply{calls: []ToolCall{{ID: callID(seed, 0), Type: "function",
				Function: FunctionCall{Name: in.call, Arguments: string(b)}}}}
		}
	}
	return reply{text: fmt.Sprintf("The %s offered here takes arguments I can't give it: %s.", in.call, err)}
}

// arguments are in's call's arguments, named as the offered schema s
// names them where the rules leave a choice.
func (in *instruction) arguments(s *schema) map[string]any {
	args := map[string]any{}
	switch in.call {
	case "run__command", "run__start":
		args["argv"] = in.argv
	case "file__read":
		args["path"] = in.path
	case "file__write":
		args["path"] = in.path
		args["content"] = in.content
	case "file__list":
		if in.path != "" {
			args["path"] = in.path
		}
	case "memory__remember":
		args[s.textProperty("text", "content", "note", "memory")] = in.content
	case "memory__search":
		args[s.textProperty("words", "query", "text")] = in.content
	case "scheduler__add":
		args["text"] = in.content
		args["in_minutes"] = in.minutes
	case "scheduler__start_subagent":
		args["task"] = in.content
		if in.tools != nil {
			args["tools"] = in.tools
		}
	}
	return args
}

// pendingInstruction is the obedient way: the instructions found in the
// context (every message but the model's own), the latest message's
// first, past those the model already made the same call for after it
// and those whose words make no call.
func pendingInstruction(msgs []Message) *instruction {
	sc := newScanner()
	done := map[string]bool{} // the calls made after the message at hand
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			for _, c := range msgs[i].ToolCalls {
				for _, k := range callKeys(c) {
					done[k] = true
				}
			}
			continue
		}
		for _, in := range sc.anywhere(msgs[i].Text()) {
			if in.bad == "" && !done[in.key()] {
				return in
			}
		}
	}
	return nil
}

// key names in's call and arguments, as callKeys names a call made.
func (in *instruction) key() string {
	if in.call == "memory__remember" || in.call == "memory__search" {
		return in.call + "\x00text\x00" + in.content
	}
	b, _ := json.Marshal(in.arguments(nil))
	return in.call + "\x00" + string(b)
}

// callKeys name a call made: its name and arguments (keys sorted), and
// for a call of one string argument, that string too (memory__remember's
// text, whatever its schema names it).
func callKeys(c ToolCall) []string {
	var args map[string]any
	if json.Unmarshal([]byte(c.Function.Arguments), &args) != nil {
		return nil
	}
	b, _ := json.Marshal(args)
	keys := []string{c.Function.Name + "\x00" + string(b)}
	if len(args) == 1 {
		for _, v := range args {
			if s, ok := v.(string); ok {
				keys = append(keys, c.Function.Name+"\x00text\x00"+s)
			}
		}
	}
	return keys
}

func lastUser(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return i
		}
	}
	return -1
}

// toolAnswersLast reports whether the context ends with tool answers.
func toolAnswersLast(msgs []Message) bool {
	return len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool"
}

// quoteToolAnswers words the trailing tool answers: "<tool> answered: …"
// with each answer's first lines.
func quoteToolAnswers(msgs []Message) string {
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == "tool" {
		start--
	}
	names := map[string]string{}
	for _, m := range msgs[:start] {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
		}
	}
	var parts []string
	for _, m := range msgs[start:] {
		name := names[m.ToolCallID]
		if name == "" {
			name = m.Name
		}
		if name == "" {
			name = "the tool"
		}
		if tool, _, ok := strings.Cut(name, "__"); ok {
			name = tool
		}
		parts = append(parts, name+" answered: "+firstLines(m.Text()))
	}
	return strings.Join(parts, "\n\n")
}

func firstLines(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	more := len(lines) > quoteLines
	if more {
		lines = lines[:quoteLines]
	}
	for i, l := range lines {
		lines[i] = cut(textsafe.Line(l), quoteLineSize)
	}
	s := strings.Join(lines, "\n")
	if more {
		s += "\n…"
	}
	return s
}

// cut is s in at most n bytes, never splitting a character, "…" after a cut.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// callID is the i-th call's id: "call_" and 24 hex digits of the
// request's hash and i.
func callID(seed [32]byte, i int) string {
	var b [40]byte
	copy(b[:], seed[:])
	binary.BigEndian.PutUint64(b[32:], uint64(i))
	h := sha256.Sum256(b[:])
	return "call_" + hex.EncodeToString(h[:12])
}
