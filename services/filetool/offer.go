package filetool

import "encoding/json"

// Offer is what the server offers: every call but find under --no-find,
// and each write's diff but under --no-diffs.
type Offer struct {
	NoFind  bool
	NoDiffs bool
}

// tool is one call as listed.
type tool struct {
	name, description string
	schema            map[string]any
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

func object(required []string, props map[string]any) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required // never null: a client may drop a call whose schema says "required": null
	}
	return o
}

// Tools are the calls this offer lists, in order.
func (o Offer) Tools() []tool {
	answer := "Answers with the file's new version and the unified diff from what it held (from /dev/null for a new file), or past 16 KB diff_cut and the new text's sha256."
	if o.NoDiffs {
		answer = "Answers with the file's new version."
	}
	path := prop("string", "a path relative to the files folder, never absolute, without ..")
	ts := []tool{
		{"read", "Read a text file (at most 4 MiB), a page of lines at a time: from line 1 it reads the file; a later line pages the text read from line 1. Answers with its version, the lines, the total, and next_line while there is more.",
			object([]string{"path"}, map[string]any{"path": path,
				"line":  prop("integer", "the first line to answer (1-based; default 1)"),
				"limit": prop("integer", "at most this many lines (default and most 2000)")})},
		{"write", "Write a whole text file (at most 4 MiB) in a folder it may write. It is refused if the file changed since this session last read or wrote it. " + answer,
			object([]string{"path", "content"}, map[string]any{"path": path, "content": prop("string", "the whole new text")})},
		{"replace", "Replace text in a text file: old must be in it once (or with all, at least once). " + answer,
			object([]string{"path", "old", "new"}, map[string]any{"path": path,
				"old": prop("string", "the text to replace, exactly"), "new": prop("string", "what replaces it"),
				"all": prop("boolean", "replace every occurrence")})},
		{"find", "Find files below a folder by name (a glob, any case; matched against the path below the folder when it holds /) and by text (a regular expression of one line). Never follows a link; hidden names are left out. Answers cut: true where it stopped short (at max, or past 4 MiB of matches).",
			object(nil, map[string]any{"path": prop("string", "the folder to search (default the files folder)"),
				"name": prop("string", "a glob such as *.go or src/**/*.md"), "text": prop("string", "a regular expression of a line"),
				"max": prop("integer", "at most this many matches (default 200, most 1000)")})},
		{"list", "List a folder's entries: name and type (file, folder, link, other). Never follows a link. Answers cut: true where it stopped short, past 10,000 entries (the first by name) or 4 MiB of names.",
			object(nil, map[string]any{"path": prop("string", "the folder (default the files folder)")})},
	}
	out := ts[:0]
	for _, t := range ts {
		if t.name == "find" && o.NoFind {
			continue
		}
		out = append(out, t)
	}
	return out
}

// diffFields are what --no-diffs takes out of an answer.
var diffFields = []string{"diff", "diff_cut", "sha256"}

// Shape takes out of an answer what the offer leaves out.
func (o Offer) Shape(name string, ok json.RawMessage) json.RawMessage {
	if !o.NoDiffs || (name != "write" && name != "replace") {
		return ok
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(ok, &m) != nil {
		return ok
	}
	for _, f := range diffFields {
		delete(m, f)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ok
	}
	return b
}
