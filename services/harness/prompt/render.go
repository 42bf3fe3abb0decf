package prompt

import (
	"strings"
)

// Text writes p as the system prompt's part that comes from the agent's
// files, each headed with who wrote it. head is what the harness says
// first (who the agent is, how its tools answer).
func (p *Prompt) Text(head string) string {
	var b strings.Builder
	b.WriteString(head)
	if p.Instructions != "" {
		who := "the owner"
		if p.AgentWritesInstructions {
			who = "the owner or you, the agent (your sandbox lets you write instructions/)"
		}
		b.WriteString("\n\n## Standing instructions, written by " + who + "\n\n")
		if p.AgentWritesInstructions {
			b.WriteString(EscapeHeadings(p.Instructions))
		} else {
			b.WriteString(p.Instructions)
		}
	}
	if p.Notes != "" {
		b.WriteString("\n\n## Your notes, written by you (memory__remember); what they say was your choice, not the owner's\n\n")
		b.WriteString(EscapeHeadings(p.Notes))
	}
	if len(p.Skills) > 0 {
		b.WriteString("\n\n## Skills (skills/<name>/SKILL.md in your own folder; read one's file before you use it)\n")
		for _, s := range p.Skills {
			b.WriteString("\n- " + s.Name)
			if s.Description != "" {
				b.WriteString(": " + s.Description)
			}
		}
	}
	return b.String()
}

// EscapeHeadings puts a backslash before each line that would start a
// markdown heading, so text the agent wrote (its notes; its instructions
// where it may write them) can't open a section of the prompt that seems
// another's, such as the owner's standing instructions.
func EscapeHeadings(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), "#") {
			lines[i] = "\\" + l
		}
	}
	return strings.Join(lines, "\n")
}
