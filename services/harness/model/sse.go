package model

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseEvent is one server-sent event: its name ("" when the stream names
// none) and its data, the data lines joined by newlines.
type sseEvent struct {
	Name string
	Data []byte
}

// sseReader reads server-sent events (the WHATWG event-stream format)
// from a provider's answer. A line ends at LF or CRLF; a line past
// MaxLine, and an event whose data is past MaxLine, is refused; a stream
// that ends inside an event (a line without its end, or an event
// without the blank line that dispatches it) is cut. Comments, "id" and
// "retry" are read and ignored. A lone CR is kept in the line: none of
// the providers spoken here ends lines with it, and taking it as an end
// would let a value carry a line the provider never sent.
type sseReader struct {
	br    *bufio.Reader
	first bool
	line  []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 64<<10), first: true}
}

// errLine is a line or an event's data past MaxLine.
var errLine = errors.New("a line of the stream is over 1 MiB")

// errCutEvent is a stream that ended inside an event.
var errCutEvent = errors.New("the stream ended inside an event")

// Next gives the next event; io.EOF when the stream ended between
// events; errCutEvent when it ended inside one; errLine past MaxLine;
// and the reader's own error otherwise.
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data []byte
	hasData, pending := false, false
	for {
		line, err := s.readLine()
		if err == io.EOF {
			if pending {
				return sseEvent{}, errCutEvent
			}
			return sseEvent{}, io.EOF
		}
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = data
				return ev, nil
			}
			ev.Name, pending = "", false
			continue
		}
		if line[0] == ':' {
			// A comment (a keep-alive) is no part of an event.
			continue
		}
		pending = true
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > MaxLine {
				return sseEvent{}, errLine
			}
		}
	}
}

// readLine gives one line without its end; io.EOF at the end of the
// stream with no line begun; errCutEvent for a last line without its
// end.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		if len(s.line)+len(chunk) > MaxLine+2 {
			return nil, errLine
		}
		s.line = append(s.line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			if len(s.line) == 0 {
				return nil, io.EOF
			}
			return nil, errCutEvent
		}
		if err != nil {
			return nil, err
		}
		break
	}
	line := s.line[:len(s.line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if s.first {
		s.first = false
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	if len(line) > MaxLine {
		return nil, errLine
	}
	return line, nil
}
