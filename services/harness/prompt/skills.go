package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"lnk.dev/lnk/internal/resolve"
)

// readSkills lists skills/ (refused whole when it is a link) and reads
// the head of each skill's SKILL.md, leaving out a skill that is a link or
// whose SKILL.md is, each logged.
func (s *Source) readSkills() ([]Skill, error) {
	ents, cut, err := s.root.ListFirst(SkillsDir, resolve.ListOptions{SkipHidden: true, Max: MaxSkills})
	if err != nil {
		if left, why := leftOut(err); left {
			if why != "" {
				s.o.Logf("prompt: %s/ left out: %s", SkillsDir, why)
			}
			return nil, nil
		}
		if errors.Is(err, resolve.ErrTooLarge) {
			s.o.Logf("prompt: %s/ left out: it holds too many names", SkillsDir)
			return nil, nil
		}
		return nil, fmt.Errorf("prompt: listing %s/: %w", SkillsDir, err)
	}
	if cut {
		s.o.Logf("prompt: %s/ holds more than %d skills: the first %d by name are in the prompt", SkillsDir, MaxSkills, MaxSkills)
	}
	var out []Skill
	for _, e := range ents {
		if e.Type&fs.ModeSymlink != 0 {
			s.o.Logf("prompt: skill %q left out: it is a link, which Link never follows", e.Name)
			continue
		}
		if !e.IsDir() {
			continue
		}
		name := e.Path + "/" + SkillFile
		b, cutHead, err := readHead(s.root, name, MaxFile)
		if err != nil {
			if left, why := leftOut(err); left {
				if why != "" {
					s.o.Logf("prompt: skill %q left out: %s %s", e.Name, SkillFile, why)
				}
				continue
			}
			return nil, fmt.Errorf("prompt: reading %s: %w", name, err)
		}
		if cutHead {
			s.o.Logf("prompt: skill %q: only the first %d bytes of %s are read", e.Name, MaxFile, SkillFile)
		}
		out = append(out, Skill{Name: cleanLine(e.Name), Description: describe(cleanText(b))})
	}
	return out, nil
}

// describe is a skill's description: its front matter's "description:",
// else its first line of text that isn't a heading, cut to
// MaxDescription, on one line.
func describe(text string) string {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for _, l := range lines[1:] {
			if strings.TrimSpace(l) == "---" {
				break
			}
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "description" {
				return cap1(strings.Trim(strings.TrimSpace(v), `"'`))
			}
		}
	}
	front := len(lines) > 0 && strings.TrimSpace(lines[0]) == "---"
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if front {
			if i > 0 && t == "---" {
				front = false
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return cap1(t)
	}
	return ""
}

// cap1 is s on one line, at most MaxDescription bytes.
func cap1(s string) string {
	s = cleanLine(s)
	if len(s) > MaxDescription {
		s = s[:cutPoint([]byte(s), MaxDescription)] + "…"
	}
	return s
}

// cleanLine keeps s on one line: every control character a space.
func cleanLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
