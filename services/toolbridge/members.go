package toolbridge

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// A server's answer is passed on as the server wrote it but for its id,
// which is put back to the client's: the bridge finds the answer's
// top-level members by their place in the line rather than decoding the
// whole message and encoding it again (most of a large answer's cost).

// errNotObject is returned for a line that is not one valid JSON object.
var errNotObject = errors.New("not one JSON object")

// span is where one member's value lies in a line: line[start:end].
type span struct{ start, end int }

// members finds the top-level members of the JSON object in line and
// calls visit with each key (unescaped) and where its value lies. line
// must be one valid JSON object; anything else is errNotObject.
func members(line []byte, visit func(key string, v span)) error {
	if !json.Valid(line) {
		return errNotObject
	}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errNotObject
	}
	i = skipSpace(line, i+1)
	if line[i] == '}' {
		return nil
	}
	for {
		kEnd := skipString(line, i)
		key, err := unquote(line[i:kEnd])
		if err != nil {
			return errNotObject
		}
		i = skipSpace(line, kEnd)
		i = skipSpace(line, i+1) // the ':'
		vEnd := skipValue(line, i)
		visit(key, span{i, vEnd})
		i = skipSpace(line, vEnd)
		if line[i] == '}' {
			return nil
		}
		i = skipSpace(line, i+1) // the ','
	}
}

// unquote decodes a key as encoding/json does (escapes, and invalid
// UTF-8 made U+FFFD); a plain ASCII key is taken as it is.
func unquote(s []byte) (string, error) {
	plain := true
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(s[1 : len(s)-1]), nil
	}
	var k string
	err := json.Unmarshal(s, &k)
	return k, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the end of the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the end of the value starting at b[i], which is valid.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// answerFields are what the bridge reads of a server's line: its id and
// method where it has them (the rest passes as it is). dup is set when a
// line names either twice, which the bridge drops rather than guess
// which one its reader means.
type answerFields struct {
	id, method span
	hasID      bool
	hasMethod  bool
	dup        bool
}

func readAnswer(line []byte) (answerFields, error) {
	var f answerFields
	err := members(line, func(k string, v span) {
		switch k {
		case "id":
			f.dup = f.dup || f.hasID
			f.id, f.hasID = v, true
		case "method":
			f.dup = f.dup || f.hasMethod
			f.method, f.hasMethod = v, true
		}
	})
	return f, err
}
