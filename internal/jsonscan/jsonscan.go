// Package jsonscan finds a JSON object's top-level members by their place
// in the line, without decoding their values: the tool bridge and the hub
// put an id back into a server's answer by splicing it, rather than
// decoding a large answer and encoding it again. Strict is the one
// strict decoder of a small JSON object at a trust boundary (a tool's
// arguments, a message at the way in, a record Link keeps).
//
// # Security
//
// It reads lines from the peers on both sides of the bridge (a sandboxed
// client, a tool's server). A line is scanned only after Valid (json.Valid's
// grammar in tight loops; FuzzValid holds the two to the same answer)
// has accepted it, and keys are unescaped as encoding/json unescapes
// them, so a caller sees the members a decoder would; what a caller does about a
// member written twice, or in another case (encoding/json matches keys in
// any case), is its own rule, and both callers refuse such lines.
package jsonscan

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// ErrNotObject is returned for a line that is not one valid JSON object.
var ErrNotObject = errors.New("not one JSON object")

// Span is where one member's value lies in a line: line[Start:End].
type Span struct{ Start, End int }

// Members calls visit with each top-level member's key (unescaped) and
// where its value lies, in order. line must be one valid JSON object;
// anything else is ErrNotObject.
func Members(line []byte, visit func(key string, v Span)) error {
	if !Valid(line) {
		return ErrNotObject
	}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(line, i+1)
	if line[i] == '}' {
		return nil
	}
	for {
		kEnd := skipString(line, i)
		key, err := unquote(line[i:kEnd])
		if err != nil {
			return ErrNotObject
		}
		i = skipSpace(line, kEnd)
		i = skipSpace(line, i+1) // the ':'
		vEnd := skipValue(line, i)
		visit(key, Span{i, vEnd})
		i = skipSpace(line, vEnd)
		if line[i] == '}' {
			return nil
		}
		i = skipSpace(line, i+1) // the ','
	}
}

// Splice is line with the value at v replaced by with.
func Splice(line []byte, v Span, with []byte) []byte {
	out := make([]byte, 0, len(line)-(v.End-v.Start)+len(with))
	out = append(out, line[:v.Start]...)
	out = append(out, with...)
	return append(out, line[v.End:]...)
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
