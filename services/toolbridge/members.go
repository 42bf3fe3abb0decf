package toolbridge

import (
	"strings"

	"lnk.dev/lnk/internal/jsonscan"
)

// A server's answer is passed on as the server wrote it but for its id,
// which is put back to the client's: the bridge finds the answer's
// top-level members by their place in the line rather than decoding the
// whole message and encoding it again (most of a large answer's cost).

// span is where one member's value lies in a line.
type span = jsonscan.Span

// members calls visit with each top-level member of the object in line
// (jsonscan.Members).
func members(line []byte, visit func(key string, v span)) error {
	return jsonscan.Members(line, visit)
}

// answerFields are what the bridge reads of a server's line: its id and
// method where it has them (the rest passes as it is). dup is set when a
// line names either twice, or in another case ("ID", which encoding/json
// reads as the id), which the bridge drops rather than guess which one
// its reader means.
type answerFields struct {
	id, method span
	hasID      bool
	hasMethod  bool
	dup        bool
}

func readAnswer(line []byte) (answerFields, error) {
	var f answerFields
	err := members(line, func(k string, v span) {
		switch {
		case strings.EqualFold(k, "id"):
			f.dup = f.dup || f.hasID || k != "id"
			f.id, f.hasID = v, true
		case strings.EqualFold(k, "method"):
			f.dup = f.dup || f.hasMethod || k != "method"
			f.method, f.hasMethod = v, true
		}
	})
	return f, err
}
