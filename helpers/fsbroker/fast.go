package fsbroker

import (
	"encoding/json"
	"strconv"

	"lnk.dev/lnk/internal/resolve"
)

// The open request and its reply are the broker's hot path: they encode
// and decode themselves (wire.Encoder, wire.Decoder) in the one form
// AppendWire writes — keys in order, strings of printable ASCII with
// nothing to escape — without reflection. Anything else, such as a name
// that needs escaping, goes to encoding/json and wire's strict decoder,
// so this only makes the common case cheaper: FuzzFastDecode checks that
// whatever DecodeWire accepts, wire.Unmarshal accepts as the same value.

// AppendWire encodes q as wire.Marshal does.
func (q *OpenReq) AppendWire(dst []byte) ([]byte, bool) {
	if !plain(q.Root) || !plain(q.Path) {
		return dst, false
	}
	dst = append(dst, `{"root":"`...)
	dst = append(dst, q.Root...)
	dst = append(dst, `","path":"`...)
	dst = append(dst, q.Path...)
	dst = append(dst, '"')
	if q.Max != 0 {
		dst = strconv.AppendInt(append(dst, `,"max":`...), q.Max, 10)
	}
	return append(dst, '}'), true
}

// DecodeWire decodes what AppendWire writes, and nothing else.
func (q *OpenReq) DecodeWire(b []byte) bool {
	s := scanner{b: b}
	root, ok1 := s.field(`{"root":`)
	path, ok2 := s.field(`,"path":`)
	if !ok1 || !ok2 {
		return false
	}
	var max int64
	if s.lit(`,"max":`) {
		var ok bool
		if max, ok = s.int(); !ok || max == 0 {
			return false // "max":0 is valid, but not AppendWire's: Unmarshal decides
		}
	}
	if !s.lit("}") || s.i != len(b) {
		return false
	}
	*q = OpenReq{Root: string(root), Path: string(path), Max: max}
	return true
}

// AppendWire encodes r as wire.Marshal does.
func (r *OpenReply) AppendWire(dst []byte) ([]byte, bool) {
	if !plain(r.Version) {
		return dst, false
	}
	dst = append(dst, `{"version":"`...)
	dst = append(dst, r.Version...)
	dst = strconv.AppendInt(append(dst, `","size":`...), r.Size, 10)
	return append(dst, '}'), true
}

// DecodeWire decodes what AppendWire writes, and nothing else.
func (r *OpenReply) DecodeWire(b []byte) bool {
	v, size, ok := DecodeOpenReply(b)
	if ok {
		*r = OpenReply{Version: string(v), Size: size}
	}
	return ok
}

// DecodeOpenReply is [OpenReply.DecodeWire] handing the version token
// back in place (it aliases b), for a caller that parses it at once.
func DecodeOpenReply(b []byte) (version []byte, size int64, ok bool) {
	s := scanner{b: b}
	v, ok := s.field(`{"version":`)
	if !ok || !s.lit(`,"size":`) {
		return nil, 0, false
	}
	size, ok = s.int()
	if !ok || !s.lit("}") || s.i != len(b) {
		return nil, 0, false
	}
	return v, size, true
}

// openOut is the broker's side of an [OpenReply]: the version itself,
// whose token is written straight into the record, with no string made.
type openOut struct{ v resolve.Version }

// AppendWire writes what OpenReply{Version: v.String(), Size: v.Size}
// encodes to (a version token never needs escaping).
func (o *openOut) AppendWire(dst []byte) ([]byte, bool) {
	dst = o.v.AppendTo(append(dst, `{"version":"`...))
	dst = strconv.AppendInt(append(dst, `","size":`...), o.v.Size, 10)
	return append(dst, '}'), true
}

// MarshalJSON is for encoding/json, which wire never needs for it.
func (o *openOut) MarshalJSON() ([]byte, error) {
	return json.Marshal(&OpenReply{Version: o.v.String(), Size: o.v.Size})
}

// plain reports whether s is printable ASCII with no '"' or '\', which
// JSON (and encoding/json, which also escapes <, > and &) writes as is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte(s[i]) {
			return false
		}
	}
	return true
}

func plainByte(c byte) bool {
	return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

// field reads the literal key, then a plain string.
func (s *scanner) field(key string) ([]byte, bool) {
	if !s.lit(key) || !s.lit(`"`) {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		if c == '"' {
			v := s.b[start:s.i]
			s.i++
			return v, true
		}
		if !plainByte(c) {
			return nil, false
		}
	}
	return nil, false
}

// int reads a JSON integer as strconv.AppendInt writes it: -?(0|[1-9][0-9]*).
func (s *scanner) int() (int64, bool) {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i-digits > 1) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return n, err == nil
}
