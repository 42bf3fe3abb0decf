package mcpstdio

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"lnk.dev/lnk/internal/jsonscan"
)

// maxSafeID is the largest integer a float64 holds exactly: the go-sdk
// reads an id as a float64, so a larger one is left to it.
const maxSafeID = 1 << 53

// plainCall is line as a plain tools/call of one of the tools named, or
// ok false.
func plainCall(line []byte, names []string) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	if bytes.Count(line, []byte("{"))+bytes.Count(line, []byte("[")) > 100 {
		return id, "", nil, false // nesting that might reach the go-sdk's cap: its own answer
	}
	if id, name, args, ok = compactCall(line, names); ok {
		return id, name, args, true
	}
	return decodedCall(line, names)
}

// compactCall is plainCall of a line in the spellings clients write:
// keys in the go-sdk's order (params' name before arguments) or in
// sorted order (arguments first), no space. The arguments are checked to
// be one JSON value, the rest matched byte for byte; any other line is
// not taken here.
func compactCall(line []byte, names []string) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	const method = `,"method":"tools/call","params":{`
	rest, ok := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return id, "", nil, false
	}
	// An id that plainID takes holds no quote, so the first such text ends it.
	i := bytes.Index(rest, []byte(method))
	if i < 0 {
		return id, "", nil, false
	}
	if id, ok = plainID(rest[:i]); !ok {
		return id, "", nil, false
	}
	rest, ok = bytes.CutSuffix(rest[i+len(method):], []byte("}}"))
	if !ok {
		return id, "", nil, false
	}
	if r, first := bytes.CutPrefix(rest, []byte(`"name":"`)); first { // name, then arguments if any
		for _, n := range names {
			if after, found := bytes.CutPrefix(r, []byte(n+`"`)); found {
				name, rest = n, after
				break
			}
		}
		if name == "" {
			return id, "", nil, false
		}
		if len(rest) == 0 {
			return id, name, nil, true
		}
		args, ok = bytes.CutPrefix(rest, []byte(`,"arguments":`))
	} else { // arguments, then name
		if rest, ok = bytes.CutPrefix(rest, []byte(`"arguments":`)); !ok {
			return id, "", nil, false
		}
		for _, n := range names {
			if before, found := bytes.CutSuffix(rest, []byte(`,"name":"`+n+`"`)); found {
				name, args = n, before
				break
			}
		}
		ok = name != ""
	}
	if !ok || len(args) == 0 || isSpace(args[0]) || isSpace(args[len(args)-1]) || !jsonscan.Valid(args) {
		return id, "", nil, false
	}
	return id, name, args, true
}

// decodedCall is plainCall of any spelling: keys in any order, space
// between them.
func decodedCall(line []byte, names []string) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	var seen [4]bool
	var params json.RawMessage
	if !delim(d, '{') {
		return id, "", nil, false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return id, "", nil, false
		}
		var raw json.RawMessage
		if d.Decode(&raw) != nil {
			return id, "", nil, false
		}
		var i int
		switch k {
		case "jsonrpc":
			i, ok = 0, string(raw) == `"2.0"`
		case "id":
			i = 1
			id, ok = plainID(raw)
		case "method":
			i, ok = 2, string(raw) == `"tools/call"`
		case "params":
			i, ok, params = 3, true, raw
		default:
			ok = false
		}
		if !ok || seen[i] {
			return id, "", nil, false
		}
		seen[i] = true
	}
	if !delim(d, '}') || seen != [4]bool{true, true, true, true} {
		return id, "", nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return id, "", nil, false
	}
	name, args, ok = plainParams(params, names)
	return id, name, args, ok
}

// plainParams is params as {"name", "arguments"} naming one of the
// tools named, each at most once, nothing else.
func plainParams(params json.RawMessage, names []string) (name string, args json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(params))
	if !delim(d, '{') {
		return "", nil, false
	}
	var seenArgs bool
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return "", nil, false
		}
		var raw json.RawMessage
		if d.Decode(&raw) != nil {
			return "", nil, false
		}
		switch {
		case k == "name" && name == "":
			if name = offered(raw, names); name == "" {
				return "", nil, false
			}
		case k == "arguments" && !seenArgs:
			seenArgs, args = true, raw
		default:
			return "", nil, false
		}
	}
	if !delim(d, '}') || name == "" {
		return "", nil, false
	}
	return name, args, true
}

// offered is the tool a raw JSON string names, spelt without escapes, if
// it is one of names; else "".
func offered(raw json.RawMessage, names []string) string {
	for _, n := range names {
		if len(raw) == len(n)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == n {
			return n
		}
	}
	return ""
}

// plainID is a raw id the go-sdk reads to the same ID: an integer float64
// holds exactly, or a string of printable ASCII with no escape.
func plainID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, false
	}
	if raw[0] == '"' || raw[len(raw)-1] == '"' {
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return jsonrpc.ID{}, false
		}
		for _, b := range raw[1 : len(raw)-1] {
			if b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
				return jsonrpc.ID{}, false
			}
		}
		id, err := jsonrpc.MakeID(string(raw[1 : len(raw)-1]))
		return id, err == nil
	}
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 16 || (digits[0] == '0' && len(digits) > 1) {
		return jsonrpc.ID{}, false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return jsonrpc.ID{}, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxSafeID || n < -maxSafeID {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(float64(n)) // as the go-sdk makes it
	return id, err == nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func delim(d *json.Decoder, want json.Delim) bool {
	t, err := d.Token()
	return err == nil && t == want
}
