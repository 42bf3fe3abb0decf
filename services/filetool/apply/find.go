package apply

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/services/filetool/query"
)

type findArgs struct {
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text,omitempty"`
	Max  int    `json:"max,omitempty"`
}

// Match is one thing find found: a file, or a line of one.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// FindAnswer is find's answer. Cut says it stopped at max matches, at
// the walk's cap, or where the matches' bytes would pass 4 MiB; Skipped
// counts files a text search left out (over 1 MiB, not text, or refused
// when opened).
type FindAnswer struct {
	Matches []Match `json:"matches"`
	Cut     bool    `json:"cut,omitempty"`
	Skipped int     `json:"skipped,omitempty"`
	size    int     // the matches' bytes, JSON-encoded
}

const (
	findDefault = 200
	findMax     = 1000
	lineShown   = 300 // bytes of a matching line answered
)

// find walks the folder path (never through a link, hidden names left
// out) for files whose name matches, and with text, their matching lines.
func (s *Session) find(raw []byte) (any, error) {
	var a findArgs
	if err := decodeArgs("find", raw, &a); err != nil {
		return nil, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	if err := checkName("find", a.Path); err != nil {
		return nil, err
	}
	if a.Max <= 0 || a.Max > findMax {
		a.Max = min(max(a.Max, findDefault), findMax)
	}
	q, err := query.Compile(a.Name, a.Text)
	if err != nil {
		return nil, refused("find", "", err)
	}
	ans := &FindAnswer{Matches: []Match{}}
	err = s.files.Walk(a.Path, maxWalk, func(e Entry) error {
		if e.Type != "file" || !q.MatchName(below(a.Path, e.Path)) {
			return nil
		}
		if q.Text == nil {
			return ans.add(Match{Path: e.Path}, a.Max)
		}
		b, _, err := s.files.Read(e.Path, maxFind)
		if err != nil || !isText(b) {
			ans.Skipped++
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64<<10), maxFind+1)
		for n := 1; sc.Scan(); n++ {
			if line := sc.Text(); q.MatchLine(line) {
				if err := ans.add(Match{Path: e.Path, Line: n, Text: cutLine(line)}, a.Max); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, resolve.ErrTooLarge) {
		return nil, refused("find", a.Path, reason(err))
	}
	if err != nil {
		ans.Cut = true // the walk passed its cap
	}
	return ans, nil
}

func (a *FindAnswer) add(m Match, max int) error {
	n := encodedLen(m)
	if len(a.Matches) >= max || a.size+n > maxListed {
		a.Cut = true
		return fs.SkipAll
	}
	a.Matches = append(a.Matches, m)
	a.size += n
	return nil
}

// encodedLen is v's length JSON-encoded as an answer encodes it, and a
// comma: a name's bytes can take up to six each (\u0001, \u003c).
func encodedLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return maxListed + 1 // never answered
	}
	return len(b) + 1
}

// below is p's path below the folder dir.
func below(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

func cutLine(s string) string {
	if len(s) <= lineShown {
		return s
	}
	i := lineShown
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

type listArgs struct {
	Path string `json:"path,omitempty"`
}

// ListAnswer is a folder's entries, links shown as links. Cut says it
// stopped short: past 10,000 entries (the first by name), or where the
// entries' bytes would pass 4 MiB.
type ListAnswer struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
	Cut     bool    `json:"cut,omitempty"`
}

func (s *Session) list(raw []byte) (any, error) {
	var a listArgs
	if err := decodeArgs("list", raw, &a); err != nil {
		return nil, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	if err := checkName("list", a.Path); err != nil {
		return nil, err
	}
	ents, cut, err := s.files.List(a.Path, maxList)
	if err != nil {
		return nil, refused("list", a.Path, reason(err))
	}
	if ents == nil {
		ents = []Entry{}
	}
	ans := &ListAnswer{Path: a.Path, Entries: ents, Cut: cut}
	size := 0
	for i := range ents {
		ents[i].Path = ""
		if size += encodedLen(ents[i]); size > maxListed {
			ans.Entries, ans.Cut = ents[:i], true
			break
		}
	}
	return ans, nil
}
