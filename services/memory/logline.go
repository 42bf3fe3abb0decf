package memory

import (
	"fmt"
	"io"
	"strings"

	"lnk.dev/lnk/internal/textsafe"
)

// LogLine writes one line of lnk-memory's log to w: "lnk-memory: " and
// what format and args say, made one printable line by
// internal/textsafe.Line (a newline becomes a space first). A document's
// name and a caller's words are the agent's to choose: a "\r", U+2028,
// U+2029 or an escape sequence in them would otherwise forge a line of
// the log or hide one on the owner's terminal.
func LogLine(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "lnk-memory: %s\n", textsafe.Line(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")))
}
