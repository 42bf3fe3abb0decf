package filetool

import (
	"bytes"
	"encoding/json"
	"strings"
)

// seen is the session's versions: the version of each file the session
// last read or wrote, by path, as the sandboxed process answered it. The
// process keeps the same record and names it at each write; serve keeps
// this copy so that the process started again after one ended (killed
// for a cancelled call or a bad answer, or ended on its own) is handed
// the session's versions before its first call, in seen lines
// ([seen.lines], apply's takeSeen), and a write of a file read before
// still names the version read (file-tool.txt: "kept by path ... for
// the session"). The text a read from line 1 kept is not handed on: a
// later page after a restart reads the file again.
//
// A process killed after it wrote a file but before serve read its
// answer (a call cancelled meanwhile) leaves serve the version before the
// write: the process started next refuses the next write of that file as
// changed since, and a read mends it. It errs toward refusing, never
// toward writing over a change.
type seen map[string]string

// seenLine is the most bytes of versions one seen line holds.
const seenLine = 1 << 20

// changedWords end apply's refusal of a write or replace of a file
// changed since the version it named, after which it forgets the version.
const changedWords = "; read it again, then write"

// learn notes what one call's answer, or its refusal, did to the
// process's record: a read, write or replace answers the path and the
// version the record now holds of it; a write or replace refused as
// changed since leaves none.
func (s seen) learn(name string, args, ok json.RawMessage, refused string) {
	switch name {
	case "read", "write", "replace":
	default:
		return
	}
	if refused != "" {
		if name != "read" && strings.HasSuffix(refused, changedWords) {
			var a struct {
				Path string `json:"path"`
			}
			if json.Unmarshal(args, &a) == nil {
				delete(s, a.Path)
			}
		}
		return
	}
	if p, v, good := answerVersion(ok); good {
		s[p] = v
	}
}

// answerVersion is the path and version an answer starts with, as apply
// writes it ({"path":…,"version":…, …}), read without decoding the rest
// (a page of text, a diff); any other spelling is decoded whole.
func answerVersion(ok []byte) (string, string, bool) {
	if p, rest, good := cutString(ok, `{"path":`); good {
		if v, _, good := cutString(rest, `,"version":`); good {
			return p, v, p != "" && v != ""
		}
	}
	var a struct {
		Path    string `json:"path"`
		Version string `json:"version"`
	}
	if json.Unmarshal(ok, &a) != nil {
		return "", "", false
	}
	return a.Path, a.Version, a.Path != "" && a.Version != ""
}

// cutString cuts prefix then one JSON string from b: the string, and what
// follows it.
func cutString(b []byte, prefix string) (string, []byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(prefix))
	if !ok || len(rest) == 0 || rest[0] != '"' {
		return "", nil, false
	}
	escaped := false
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			escaped = true
			i++ // the escaped byte
		case '"':
			if !escaped {
				return string(rest[1:i]), rest[i+1:], true
			}
			var s string
			if json.Unmarshal(rest[:i+1], &s) != nil {
				return "", nil, false
			}
			return s, rest[i+1:], true
		}
	}
	return "", nil, false
}

// lines is the record as seen lines, {"seen":{path:version,…}} and a
// newline each, at most about seenLine bytes a line; nil for none.
func (s seen) lines() []byte {
	var out, line []byte
	flush := func() {
		if line != nil {
			out = append(append(out, line...), "}}\n"...)
			line = nil
		}
	}
	for p, v := range s {
		pj, _ := json.Marshal(p)
		vj, _ := json.Marshal(v)
		if line != nil && len(line)+len(pj)+len(vj) > seenLine {
			flush()
		}
		if line == nil {
			line = append(line, `{"seen":{`...)
		} else {
			line = append(line, ',')
		}
		line = append(append(append(line, pj...), ':'), vj...)
	}
	flush()
	return out
}
