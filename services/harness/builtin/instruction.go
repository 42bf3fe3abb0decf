package builtin

import (
	"regexp"
	"strconv"
	"strings"
)

// noteText is what "write a note to <path>" writes.
const noteText = "A note from Link's built-in model.\n"

// An instruction is one rule's match: the call it asks for and what it
// fills the call with. bad, when set, is why its words don't make a call
// (a quote never closed).
type instruction struct {
	call    string // run__command, run__start, file__read, file__write, file__list, memory__remember, memory__search, scheduler__add, scheduler__start_subagent
	said    string // the words that asked, as found
	minutes int    // scheduler__add's in_minutes
	argv    []string
	path    string
	content string
	tools   []string // scheduler__start_subagent's tools; nil: none named (all of the parent's)
	bad     string
}

var (
	reRun      = regexp.MustCompile(`(?is)^(run|start)\s+(.+)$`)
	reRead     = regexp.MustCompile(`(?is)^read\s+(.+)$`)
	reNote     = regexp.MustCompile(`(?is)^write\s+a\s+note\s+to\s+(.+)$`)
	reWrite    = regexp.MustCompile(`(?is)^write\s+(.+)\s+to\s+(\S+)$`)
	reList     = regexp.MustCompile(`(?is)^list\s+files(?:\s+in\s+(.+))?$`)
	reRemember = regexp.MustCompile(`(?is)^remember\s+(.+)$`)
	reSearch   = regexp.MustCompile(`(?is)^(?:search|search\s+for|search\s+memory\s+for)\s+(.+?)\s*\??$`)
	reKnow     = regexp.MustCompile(`(?is)^what\s+do\s+you\s+know\s+(?:about|of)\s+(.+?)\s*\??$`)
	reRemind   = regexp.MustCompile(`(?is)^remind\s+me\s+in\s+([0-9]{1,6})\s+minutes?\s+(?:to\s+)?(.+)$`)
	reSubagent = regexp.MustCompile(`(?is)^subagent(?:\s+with\s+(no\s+tools|tools?\s+[A-Za-z0-9_.,\s-]+?))?\s*:\s*(.+)$`)
	reTask     = regexp.MustCompile(`^A message from task-[A-Za-z0-9_.-]{1,128}, not from the owner;`)
)

// parseInstruction applies the rules to one line; nil when none matches.
func parseInstruction(line string) *instruction {
	line = strings.TrimSpace(line)
	verb, _, _ := strings.Cut(line, " ")
	verb, _, _ = strings.Cut(verb, "\t")
	switch strings.ToLower(verb) {
	case "run", "start", "read", "write", "list", "remember", "search", "what", "remind", "subagent", "subagent:":
	default:
		return nil // no rule's verb: no rule is tried
	}
	if m := reRun.FindStringSubmatch(line); m != nil {
		in := &instruction{call: "run__" + map[string]string{"run": "command", "start": "start"}[strings.ToLower(m[1])], said: line}
		argv, err := splitWords(m[2])
		switch {
		case err != nil:
			in.bad = "I couldn't split that command line into words: " + err.Error() + "."
		case len(argv) == 0:
			return nil
		}
		in.argv = argv
		return in
	}
	if m := reRead.FindStringSubmatch(line); m != nil {
		if p, ok := oneWord(m[1]); ok {
			return &instruction{call: "file__read", said: line, path: p}
		}
		return nil
	}
	if m := reNote.FindStringSubmatch(line); m != nil {
		if p, ok := oneWord(m[1]); ok {
			return &instruction{call: "file__write", said: line, path: p, content: noteText}
		}
		return nil
	}
	if m := reWrite.FindStringSubmatch(line); m != nil {
		p, ok := oneWord(m[2])
		if !ok {
			return nil
		}
		text := strings.TrimSpace(m[1])
		if w, ok := oneWord(text); ok {
			text = w
		}
		return &instruction{call: "file__write", said: line, path: p, content: text}
	}
	if m := reList.FindStringSubmatch(line); m != nil {
		in := &instruction{call: "file__list", said: line}
		if m[1] != "" {
			p, ok := oneWord(m[1])
			if !ok {
				return nil
			}
			in.path = p
		}
		return in
	}
	if m := reRemember.FindStringSubmatch(line); m != nil {
		return &instruction{call: "memory__remember", said: line, content: strings.TrimSpace(m[1])}
	}
	for _, re := range []*regexp.Regexp{reKnow, reSearch} {
		if m := re.FindStringSubmatch(line); m != nil && strings.TrimSpace(m[1]) != "" {
			return &instruction{call: "memory__search", said: line, content: strings.TrimSpace(m[1])}
		}
	}
	if m := reSubagent.FindStringSubmatch(line); m != nil {
		in := &instruction{call: "scheduler__start_subagent", said: line, content: strings.TrimSpace(m[2])}
		switch with := strings.ToLower(strings.Join(strings.Fields(m[1]), " ")); {
		case with == "no tools":
			in.tools = []string{}
		case with != "":
			_, list, _ := strings.Cut(with, " ")
			in.tools = []string{}
			for _, t := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
				in.tools = append(in.tools, t)
			}
		}
		return in
	}
	if m := reRemind.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < 1 {
			return nil
		}
		return &instruction{call: "scheduler__add", said: line, minutes: n, content: strings.TrimSpace(m[2])}
	}
	return nil
}

// oneWord is s as one shell word (quotes removed), if it is one.
func oneWord(s string) (string, bool) {
	w, err := splitWords(s)
	if err != nil || len(w) != 1 || w[0] == "" {
		return "", false
	}
	return w[0], true
}

// firstLineInstruction is the owner's way: the rules applied to the first
// line of text that isn't blank, at its start only.
func firstLineInstruction(text string) *instruction {
	return parseInstruction(firstLine(subagentTask(text)))
}

// subagentTask is a subagent's task as the harness quotes it (a message
// from task-<id>, each line quoted): its lines unquoted, read as its
// instructions, as its parent wrote them; any other text as it is. Only
// a subagent's own task reads so: a schedule's, a command's or a
// stranger's message stays words, never an instruction.
func subagentTask(text string) string {
	head, rest, ok := strings.Cut(text, "\n")
	if !ok || !reTask.MatchString(head) {
		return text
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, ">"), " "))
	}
	return strings.Join(lines, "\n")
}

func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
