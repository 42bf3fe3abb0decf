package apply

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/wire"
)

// MaxLine is the longest call line taken: a 4 MiB write's content, or a
// replace's old and new, JSON-escaped.
const MaxLine = 64 << 20

// maxLine is MaxLine, lowered by tests.
var maxLine = MaxLine

// Call is one line on apply's stdin.
type Call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Answer is one line on apply's stdout: OK or Error, never both. Refused
// marks an Error that is a refusal by the file tool's rules (a name
// outside the files folder, a link, a write outside --write, …), which
// serve has the bridge log as refused; a file that isn't there, or a
// call that failed, is not.
type Answer struct {
	OK      any    `json:"ok,omitempty"`
	Error   string `json:"error,omitempty"`
	Refused bool   `json:"refused,omitempty"`
}

// DecodeCall decodes a call line strictly: an object with a string name
// and, if any, an object of arguments; any other field, a field given
// twice or in another case, a second value or a missing name is refused.
func DecodeCall(line []byte) (Call, error) {
	if c, ok := compactCall(line); ok {
		return c, nil
	}
	return decodedCall(line)
}

// compactCall is DecodeCall of a line in the spelling serve writes,
// {"name":"…","arguments":{…}} with no space: a name of printable ASCII
// with no escape, arguments checked to be one JSON object, the rest
// matched byte for byte. Its arguments are line's own bytes, not a copy.
func compactCall(line []byte) (Call, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"name":"`))
	i := bytes.IndexByte(rest, '"')
	if !ok || i <= 0 {
		return Call{}, false
	}
	name := rest[:i]
	for _, b := range name {
		if b < 0x20 || b > 0x7e || b == '\\' {
			return Call{}, false
		}
	}
	rest, ok = bytes.CutPrefix(rest[i+1:], []byte(`,"arguments":{`))
	if !ok {
		return Call{}, false
	}
	args, ok := bytes.CutSuffix(line[len(line)-len(rest)-1:], []byte("}"))
	if !ok || len(args) < 2 || args[len(args)-1] != '}' || !json.Valid(args) {
		return Call{}, false
	}
	return Call{Name: string(name), Arguments: args}, true
}

// decodedCall is DecodeCall of any spelling, by Link's one strict
// decoder (wire.Unmarshal).
func decodedCall(line []byte) (Call, error) {
	var c Call
	if err := wire.Unmarshal(line, &c); err != nil {
		return Call{}, fmt.Errorf("not a call line: %v", err)
	}
	if c.Name == "" {
		return Call{}, errors.New("not a call line: no name")
	}
	if a := bytes.TrimSpace(c.Arguments); len(a) > 0 && a[0] != '{' {
		return Call{}, errors.New("not a call line: arguments is not an object")
	}
	return c, nil
}

// Serve answers each call line from r on w, one line each, in order,
// until r ends (nil) or w fails. Seen lines before the first call give
// the session the versions it saw before (seen.go); a bad one
// ends it.
func Serve(r io.Reader, w io.Writer, s *Session) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	// One encoder for the session: it encodes into a buffer it reuses and
	// writes the line (with its newline) only once it is whole, the same
	// bytes as json.Marshal's, in one Write to capped.
	enc := json.NewEncoder(capped{bw})
	called := false
	for {
		line, err := readLine(br)
		if err == io.EOF {
			return nil
		}
		if err == nil && !called && isSeenLine(line) {
			if err := s.takeSeen(line); err != nil {
				return fmt.Errorf("the session's versions: %w", err)
			}
			continue
		}
		called = true
		var ans Answer
		switch {
		case errors.Is(err, errLineTooLong):
			ans.Error = err.Error()
		case err != nil:
			return err
		default:
			ans = answer(s, line)
		}
		if enc.Encode(ans) != nil {
			enc.Encode(Answer{Error: "the answer could not be encoded"})
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
}

// capped writes each answer line on, but one past [MaxAnswer], which
// serve would take for a misbehaving process: that is answered as an
// error instead. (list and find cut their answers well below it.)
type capped struct{ w io.Writer }

var errAnswerTooLong = fmt.Sprintf("{\"error\":\"an answer past %d MiB is not sent\"}\n", MaxAnswer>>20)

func (c capped) Write(line []byte) (int, error) {
	if len(line) > MaxAnswer {
		if _, err := io.WriteString(c.w, errAnswerTooLong); err != nil {
			return 0, err
		}
		return len(line), nil
	}
	return c.w.Write(line)
}

func answer(s *Session, line []byte) Answer {
	c, err := DecodeCall(line)
	if err != nil {
		if s.Refused != nil {
			s.Refused("call", err)
		}
		return Answer{Error: err.Error(), Refused: true}
	}
	out, err := s.Call(c.Name, c.Arguments)
	if err != nil {
		return Answer{Error: err.Error(), Refused: IsRefusal(err)}
	}
	return Answer{OK: out}
}

// IsRefusal says whether err refuses a call by the file tool's rules: a
// Refusal for any reason but a name that isn't there.
func IsRefusal(err error) bool {
	_, ok := refusal.Of(err)
	return ok && !errors.Is(err, fs.ErrNotExist)
}

var errLineTooLong = errors.New("a call line past its cap (64 MiB) is refused")

// readLine reads one line without its newline, at most MaxLine bytes; a
// longer line is read to its end, dropped, and answered errLineTooLong.
// A line that fits br's buffer is returned in it, not copied: it is valid
// until the next read of br.
func readLine(br *bufio.Reader) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if err == nil && len(chunk) <= maxLine+1 {
		return chunk[:len(chunk)-1], nil
	}
	return readRest(br, chunk, err)
}

// readRest is readLine past the first chunk: a line longer than br's
// buffer, or one ended by EOF (first, with err, what ReadSlice said).
func readRest(br *bufio.Reader, first []byte, ferr error) ([]byte, error) {
	var buf []byte
	long := false
	chunk, err := first, ferr
	for ; ; chunk, err = br.ReadSlice('\n') {
		if !long {
			if len(buf)+len(chunk) > maxLine+1 {
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(buf) > 0 || long):
			// a last line without its newline
		case err != nil:
			return nil, err
		}
		if long {
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(buf, []byte("\n")), nil
	}
}
