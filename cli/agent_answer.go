package cli

import (
	"io"

	"lnk.dev/lnk/internal/textsafe"
)

// answerPrinter prints an agent's answer, streamed in pieces, to the
// owner's terminal through textsafe.Stream: the answer is text a model,
// a tool or a page the agent read controls, so each escape sequence is
// removed whole (even cut across pieces) and every control, bidi and
// zero-width character but tab and newline removed. flush ends the
// answer, dropping a sequence or rune it left unfinished.
func answerPrinter(out io.Writer) (onText func(string), flush func()) {
	var clean textsafe.Stream
	var buf []byte
	onText = func(s string) {
		buf = clean.Write(buf[:0], []byte(s))
		out.Write(buf)
	}
	flush = func() {
		buf = clean.Flush(buf[:0])
		out.Write(buf)
	}
	return onText, flush
}
