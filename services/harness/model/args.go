package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/textsafe"
)

// maxCalls is the most tool calls one answer may hold; the turn keeps
// 16 of them, this only bounds what a parser holds.
const maxCalls = 256

// maxToolName bounds a call's name; no provider takes a longer one.
const maxToolName = 256

// checkArguments gives a call's arguments as one compact JSON object,
// refusing anything else: a value that is not an object, a key written
// twice, or two keys that differ only in case (a tool that decodes
// with encoding/json would take either). An empty text is the object
// with no members, as some servers send for a call without arguments.
func checkArguments(name string, args []byte) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	seen := map[string]bool{}
	dup := ""
	err := jsonscan.Members(args, func(key string, _ jsonscan.Span) {
		k := strings.ToLower(key)
		if seen[k] && dup == "" {
			dup = key
		}
		seen[k] = true
	})
	if err != nil {
		return nil, badResponse("tool call %q's arguments are not one JSON object", name)
	}
	if dup != "" {
		return nil, badResponse("tool call %q's arguments name %q twice", name, dup)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, args); err != nil {
		return nil, badResponse("tool call %q's arguments are not one JSON object", name)
	}
	return json.RawMessage(out.Bytes()), nil
}

// checkCall checks one finished call: a name of printable characters,
// at most maxToolName bytes, and arguments that are one JSON object.
func checkCall(c ToolCall, args []byte) (ToolCall, error) {
	if c.Name == "" {
		return ToolCall{}, badResponse("a tool call without a name")
	}
	if len(c.Name) > maxToolName || !utf8.ValidString(c.Name) || textsafe.Line(c.Name) != c.Name || strings.ContainsRune(c.Name, ' ') {
		return ToolCall{}, badResponse("a tool call's name is not a tool's name")
	}
	if len(c.ID) > maxToolName || textsafe.Line(c.ID) != c.ID {
		return ToolCall{}, badResponse("tool call %q's id is not printable", c.Name)
	}
	a, err := checkArguments(c.Name, args)
	if err != nil {
		return ToolCall{}, err
	}
	c.Arguments = a
	return c, nil
}

// badResponse is an answer that is not the provider's format; what it
// quotes of the answer (a name, a type) is cleaned and bounded as the
// provider's words are.
func badResponse(format string, args ...any) *Error {
	return &Error{Kind: KindBadResponse, Message: cleaner{}.clean(fmt.Sprintf(format, args...))}
}
