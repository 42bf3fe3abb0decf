// Package toolrefusal is how Link's own tools (run-<id>, file-<id>) say
// that a call was refused by their own rules (a program not in
// [commands], a path outside the files folder, a link), not failed: the
// result, an error, carries _meta "link.local/refused" with the reason.
// The tool bridge, which writes every call's line of the audit log (the
// kernel writes what it reports), reads it ([Reason]) and logs the call
// as a refusal with that reason instead of as passed.
//
// # Security
//
// Trusted only from Link's own tools: no added tool can take a run- or
// file- name (tooldef.CheckName) and no grant can name one, so the
// bridge reads it from those alone. The reason is the tool's words: the
// audit log cuts and cleans every string it writes. Reading holds at
// most the answer the bridge already holds; a key that isn't a string,
// a result that is not an error, or an answer that is not JSON reads as
// no refusal (the call is logged as passed, as before).
package toolrefusal

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Key is the result's _meta key naming the refusal's reason.
const Key = "link.local/refused"

// Meta is a refused call's result _meta.
func Meta(reason string) map[string]any { return map[string]any{Key: reason} }

var quoted = []byte(`"` + Key + `"`)

// Reason is the reason a tools/call's JSON-RPC answer says its tool
// refused the call, and whether it says so: its result is an error
// (isError) whose _meta holds Key as a non-empty string.
func Reason(answer []byte) (string, bool) {
	if !bytes.Contains(answer, quoted) {
		return "", false
	}
	var a struct {
		Result *struct {
			Meta    map[string]json.RawMessage `json:"_meta"`
			IsError bool                       `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Result == nil || !a.Result.IsError {
		return "", false
	}
	var why string
	if json.Unmarshal(a.Result.Meta[Key], &why) != nil || strings.TrimSpace(why) == "" {
		return "", false
	}
	return why, true
}
