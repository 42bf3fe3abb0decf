package builtin

import (
	"encoding/json"
	"sort"
	"strings"
)

// maxJSONStrings bounds how many strings jsonStrings returns.
const maxJSONStrings = 4096

// jsonStrings is every string value in text when text is JSON (depth
// first, in order, a string that is JSON itself followed by its own), or
// nothing; each parse is paid from the scan's budget.
func (sc *scanner) jsonStrings(text string) []string {
	text = strings.TrimSpace(text)
	if len(text) == 0 || (text[0] != '{' && text[0] != '[' && text[0] != '"') || !sc.spend(len(text)) {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		if len(out) >= maxJSONStrings {
			return
		}
		switch x := v.(type) {
		case string:
			out = append(out, x)
			out = append(out, sc.jsonStrings(x)...)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range sortedValues(x) {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func sortedValues(m map[string]any) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}
