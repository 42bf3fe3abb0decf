package mcpstdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/mcptext"
)

// Answer is a tool server's answer to a tools/call, one JSON-RPC
// response line, as a client of Link's reads it ([ReadAnswer]).
type Answer struct {
	ID      jsonrpc.ID // as the go-sdk makes it: an int64 or a string
	Content []Content  // the result's content, in order (nil for an error)
	IsError bool       // the result is the tool's error
	Error   *RPCError  // the JSON-RPC error the answer is instead of a result
}

// Content is one item of a result's content: its type and, for a text,
// its text.
type Content struct{ Type, Text string }

// RPCError is a JSON-RPC error's code and message.
type RPCError struct {
	Code    int64
	Message string
}

// ReadAnswer reads line, one JSON-RPC response to a tools/call, strictly
// ([strictAnswer]): a line in the plain shape Link's tool servers write
// (one text, the go-sdk's key order, an id [plainID] takes) on a fast
// path that decodes the text once ([mcptext.DecodeString]) and checks
// the rest byte for byte; any other line by encoding/json. Both give the
// same answer and refuse the same lines (FuzzReadAnswer, a differential
// target). The line is read whole: its reader caps its length, as this
// transport caps a line at [mcp.DefaultMaxLineLength].
func ReadAnswer(line []byte) (Answer, error) {
	if a, ok := plainAnswer(line); ok {
		return a, nil
	}
	return strictAnswer(line)
}

const (
	answerHead = `{"jsonrpc":"2.0","id":`
	answerText = `,"result":{"content":[{"type":"text","text":`
)

// plainAnswer is line as {"jsonrpc":"2.0","id":ID,"result":{"content":
// [{"type":"text","text":TEXT}]}} with ,"isError":true or false after
// the content or not, and JSON space after it or not; or ok false. The
// line is valid JSON exactly where the id and the text are, which
// plainID and DecodeString check; strictAnswer takes every line it takes.
func plainAnswer(line []byte) (Answer, bool) {
	line = bytes.TrimRight(line, " \t\r\n")
	rest, ok := bytes.CutPrefix(line, []byte(answerHead))
	if !ok {
		return Answer{}, false
	}
	// An id plainID takes holds no quote, so the first such text ends it.
	i := bytes.Index(rest, []byte(answerText))
	if i < 0 {
		return Answer{}, false
	}
	id, ok := plainID(rest[:i])
	if !ok {
		return Answer{}, false
	}
	text, end, ok := mcptext.DecodeString(rest, i+len(answerText))
	if !ok {
		return Answer{}, false
	}
	var isErr bool
	switch string(rest[end:]) {
	case `}]}}`, `}],"isError":false}}`:
	case `}],"isError":true}}`:
		isErr = true
	default:
		return Answer{}, false
	}
	return Answer{ID: id, Content: []Content{{Type: "text", Text: text}}, IsError: isErr}, true
}

// strictAnswer reads line by encoding/json, refusing what a reader
// might take two ways: a key written twice in an object it reads, a key
// spelt in another case than one it reads (encoding/json matches keys in
// any case), a member at the top other than jsonrpc, id, result and
// error, both or neither of result and error, null where a value is
// read, an id that is not a string or an integer a float64 holds
// exactly, a content item with no type, a text item with no text, more
// after the line's one object. Other members of the result, a content
// item and the error (_meta, structuredContent, annotations, data) are
// left unread.
func strictAnswer(line []byte) (Answer, error) {
	var a Answer
	top, err := members(line, true, "jsonrpc", "id", "result", "error")
	if err != nil {
		return a, err
	}
	if v, err := str(top, "jsonrpc"); err != nil || v != "2.0" {
		return a, answerErr(`"jsonrpc" is not "2.0"`)
	}
	if a.ID, err = answerID(top["id"]); err != nil {
		return a, err
	}
	switch res, rpcErr := top["result"], top["error"]; {
	case res != nil && rpcErr != nil:
		return a, answerErr("both a result and an error")
	case res != nil:
		return a, readResult(res, &a)
	case rpcErr != nil:
		e, err := members(rpcErr, false, "code", "message")
		if err != nil {
			return a, err
		}
		a.Error = &RPCError{}
		if a.Error.Code, err = integer(e["code"]); err != nil {
			return a, answerErr(`the error's "code" is not an integer`)
		}
		if a.Error.Message, err = str(e, "message"); err != nil {
			return a, answerErr(`the error's "message" is not a string`)
		}
		return a, nil
	}
	return a, answerErr("neither a result nor an error")
}

// readResult reads a result's content and isError into a.
func readResult(res []byte, a *Answer) error {
	r, err := members(res, false, "content", "isError")
	if err != nil {
		return err
	}
	var items []json.RawMessage
	if c := r["content"]; c == nil || c[0] != '[' || json.Unmarshal(c, &items) != nil {
		return answerErr(`the result's "content" is not an array`)
	}
	a.Content = make([]Content, 0, len(items))
	for _, item := range items {
		m, err := members(item, false, "type", "text")
		if err != nil {
			return err
		}
		var c Content
		if c.Type, err = str(m, "type"); err != nil {
			return answerErr(`a content item's "type" is not a string`)
		}
		if m["text"] != nil || c.Type == "text" {
			if c.Text, err = str(m, "text"); err != nil {
				return answerErr(`a content item's "text" is not a string`)
			}
		}
		a.Content = append(a.Content, c)
	}
	switch v := string(r["isError"]); v {
	case "", "false":
	case "true":
		a.IsError = true
	default:
		return answerErr(`the result's "isError" is not true or false`)
	}
	return nil
}

// members are obj's members read by the keys named, each value as
// written (space trimmed); an object in which a key is written twice, or
// one named is spelt in another case, is refused, and where closed, one
// with a key not named.
func members(obj []byte, closed bool, keys ...string) (map[string][]byte, error) {
	got := map[string][]byte{}
	seen := map[string]bool{}
	var bad error
	err := jsonscan.Members(obj, func(k string, v jsonscan.Span) {
		if bad != nil {
			return
		}
		if seen[k] {
			bad = answerErr(fmt.Sprintf("%q is written twice", k))
			return
		}
		seen[k] = true
		for _, want := range keys {
			switch {
			case k == want:
				got[k] = obj[v.Start:v.End]
				return
			case strings.EqualFold(k, want):
				bad = answerErr(fmt.Sprintf("%q is not spelt %q", k, want))
				return
			}
		}
		if closed {
			bad = answerErr(fmt.Sprintf("%q is not a member of a JSON-RPC response", k))
		}
	})
	if err != nil {
		return nil, answerErr("not one JSON object")
	}
	return got, bad
}

// answerID is a response's id as the go-sdk makes it: a string, or an
// integer written as one and held exactly by a float64.
func answerID(raw []byte) (jsonrpc.ID, error) {
	switch {
	case raw == nil:
		return jsonrpc.ID{}, answerErr("no id")
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, answerErr("an id that is not a string")
		}
		return jsonrpc.MakeID(s)
	}
	n, err := integer(raw)
	if err != nil || n > maxSafeID || n < -maxSafeID {
		return jsonrpc.ID{}, answerErr("an id that is neither a string nor an integer a float64 holds exactly")
	}
	return jsonrpc.MakeID(float64(n))
}

// integer is raw, a JSON number written as an integer an int64 holds;
// a fraction or an exponent is refused.
func integer(raw []byte) (int64, error) {
	if raw == nil {
		return 0, errors.New("none")
	}
	return strconv.ParseInt(string(raw), 10, 64)
}

// str is m[k] as a JSON string (not null, not absent).
func str(m map[string][]byte, k string) (string, error) {
	raw := m[k]
	if raw == nil || raw[0] != '"' {
		return "", fmt.Errorf("%q is not a string", k)
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func answerErr(why string) error { return errors.New("a tool's answer: " + why) }
