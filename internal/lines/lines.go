// Package lines reads newline-delimited messages (MCP's stdio framing)
// from a buffered reader with a cap on each, so a peer that never sends
// a newline cannot grow a reader's memory without bound.
package lines

import "bufio"

// Read reads one line without its newline. A line longer than max bytes
// is refused with tooLong once max is passed, before the rest is read.
// At the end of input it returns what came with the reader's error (a
// last line without its newline, and io.EOF).
func Read(br *bufio.Reader, max int, tooLong error) ([]byte, error) {
	var line []byte
	for {
		frag, isPrefix, err := br.ReadLine()
		line = append(line, frag...)
		if len(line) > max {
			return nil, tooLong
		}
		if err != nil || !isPrefix {
			return line, err
		}
	}
}
