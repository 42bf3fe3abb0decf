package apply

import (
	"bytes"
)

// page is the text of the file last read from line 1, kept for the
// session so that its later pages read it once.
type page struct {
	path, version string
	text          []byte
	starts        []int // the offset of each line's start
}

func newPage(path, version string, text []byte) *page {
	// One allocation for starts: a line starts after each newline but a
	// last one.
	starts := make([]int, 1, bytes.Count(text, []byte{'\n'})+1)
	p := &page{path: path, version: version, text: text, starts: starts}
	for i := 0; ; {
		j := bytes.IndexByte(text[i:], '\n')
		if j < 0 || i+j+1 == len(text) {
			break
		}
		i += j + 1
		p.starts = append(p.starts, i)
	}
	return p
}

type readArgs struct {
	Path  string `json:"path"`
	Line  int    `json:"line,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// ReadAnswer is a read's answer: lines from Line on, and NextLine, the
// line the next page starts at, while there is more.
type ReadAnswer struct {
	Path     string `json:"path"`
	Version  string `json:"version"`
	Line     int    `json:"line"`
	Lines    int    `json:"lines"` // lines in the whole file
	Text     string `json:"text"`
	NextLine int    `json:"next_line,omitempty"`
	LineCut  bool   `json:"line_cut,omitempty"` // one line longer than a page, cut
}

// read answers a page of a text file. A read from line 1 reads the file
// and keeps its text; a read from a later line of the kept file pages it
// without reading again.
func (s *Session) read(raw []byte) (any, error) {
	var a readArgs
	if p, ok := plainPathArgs(raw); ok {
		a.Path = p
	} else if err := decodeArgs("read", raw, &a); err != nil {
		return nil, err
	}
	if err := checkName("read", a.Path); err != nil {
		return nil, err
	}
	if a.Line < 1 {
		a.Line = 1
	}
	if a.Limit <= 0 || a.Limit > pageLines {
		a.Limit = pageLines
	}
	p := s.page
	if a.Line == 1 || p == nil || p.path != a.Path {
		text, v, err := s.readText("read", a.Path)
		if err != nil {
			return nil, err
		}
		p = newPage(a.Path, v, text)
		s.page = p
		s.seen[a.Path] = v
	}
	ans := &ReadAnswer{Path: a.Path, Version: p.version, Line: a.Line, Lines: len(p.starts)}
	if len(p.text) == 0 {
		ans.Lines = 0
	}
	if a.Line > ans.Lines {
		return ans, nil
	}
	start := p.starts[a.Line-1]
	end, last := len(p.text), a.Line-1+a.Limit
	if last < len(p.starts) {
		end = p.starts[last]
	}
	if end-start > maxPage {
		// Cut at the last whole line within the cap, or inside a line
		// longer than it, at a character's start.
		cut := start + maxPage
		if i := bytes.LastIndexByte(p.text[start:cut], '\n'); i >= 0 {
			cut = start + i + 1
		} else {
			for cut > start && p.text[cut]&0xC0 == 0x80 {
				cut--
			}
			ans.LineCut = true
		}
		end = cut
	}
	ans.Text = string(p.text[start:end])
	switch {
	case ans.LineCut && a.Line < ans.Lines:
		ans.NextLine = a.Line + 1
	case !ans.LineCut && end < len(p.text):
		ans.NextLine = lineOf(p.starts, end)
	}
	return ans, nil
}

// plainPathArgs is the path of arguments spelt {"path":"…"} exactly, with
// a path of printable ASCII and no escape: what decodeArgs makes of them,
// without a decoder.
func plainPathArgs(raw []byte) (string, bool) {
	p, ok := bytes.CutPrefix(raw, []byte(`{"path":"`))
	if !ok {
		return "", false
	}
	if p, ok = bytes.CutSuffix(p, []byte(`"}`)); !ok {
		return "", false
	}
	for _, b := range p {
		if b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
			return "", false
		}
	}
	return string(p), true
}

// lineOf is the 1-based line holding offset off.
func lineOf(starts []int, off int) int {
	lo, hi := 0, len(starts)
	for lo+1 < hi {
		m := (lo + hi) / 2
		if starts[m] <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + 1
}
