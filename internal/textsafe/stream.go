package textsafe

import "unicode/utf8"

// Stream cleans a byte stream (a harness's log) for the owner's terminal
// as [Line] cleans one line, but keeping newlines and tabs, and removing
// each escape sequence whole rather than only its ESC: ESC followed by
// one character, by intermediates and a final (ESC ( B), CSI (ESC [ or
// U+009B, up to its final byte), and the strings OSC, DCS, SOS, PM and
// APC (ESC ] P X ^ _ or U+009D U+0090 U+0098 U+009E U+009F, up to BEL or
// ST). A sequence also ends at a newline (kept), at CAN or SUB, and after
// MaxSequence bytes, what follows then shown as text: an unterminated
// sequence never hides more than the rest of its line, nor that beyond
// MaxSequence. State is kept across Write calls, so a stream cut anywhere
// (mid-rune, mid-sequence) cleans as it would whole.
type Stream struct {
	state uint8
	seq   int     // bytes of the sequence in progress
	part  [4]byte // the start of a rune cut by the end of a Write
	nPart int
}

// MaxSequence is the most bytes an escape sequence may hide.
const MaxSequence = 4096

const (
	stText     = iota
	stEsc      // after ESC
	stEscInter // ESC and intermediates (0x20-0x2F)
	stCSI      // in a control sequence
	stString   // in OSC, DCS, SOS, PM or APC
	stStrEsc   // ESC inside a string: ST if '\' follows
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18
	sub = 0x1a
)

// Write appends src, cleaned, to dst and returns it.
func (s *Stream) Write(dst, src []byte) []byte {
	for len(src) > 0 || s.nPart > 0 {
		if s.nPart > 0 {
			// Complete the cut rune from src, one byte at a time.
			var buf [4]byte
			n := copy(buf[:], s.part[:s.nPart])
			take := copy(buf[n:], src)
			if !utf8.FullRune(buf[:n+take]) {
				if len(src) == take { // still cut: keep it for the next Write
					copy(s.part[n:], src)
					s.nPart += take
					return dst
				}
			}
			r, size := utf8.DecodeRune(buf[:n+take])
			if size <= n { // the cut bytes were invalid: one of them goes
				dst = s.rune(dst, utf8.RuneError, 1, true)
				copy(s.part[:], s.part[1:s.nPart])
				s.nPart--
				continue
			}
			src = src[size-n:]
			s.nPart = 0
			dst = s.rune(dst, r, size, false)
			continue
		}
		if !utf8.FullRune(src) {
			s.nPart = copy(s.part[:], src)
			return dst
		}
		r, size := utf8.DecodeRune(src)
		src = src[size:]
		dst = s.rune(dst, r, size, r == utf8.RuneError && size == 1)
	}
	return dst
}

// Flush appends what a cut rune left (U+FFFD) and ends any sequence, as
// at the end of the stream.
func (s *Stream) Flush(dst []byte) []byte {
	for i := 0; i < s.nPart; i++ {
		dst = s.rune(dst, utf8.RuneError, 1, true)
	}
	s.nPart = 0
	s.state, s.seq = stText, 0
	return dst
}

// Clean is a whole stream, src, cleaned.
func Clean(src []byte) []byte {
	var s Stream
	return s.Flush(s.Write(make([]byte, 0, len(src)), src))
}

// rune handles one decoded rune of size bytes (invalid: a byte that is
// not UTF-8).
func (s *Stream) rune(dst []byte, r rune, size int, invalid bool) []byte {
	if s.state != stText {
		s.seq += size
		if s.seq > MaxSequence {
			s.state, s.seq = stText, 0
		}
	}
	switch s.state {
	case stEsc:
		switch {
		case r == '[':
			s.state = stCSI
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			s.state = stString
		case r >= 0x20 && r <= 0x2f:
			s.state = stEscInter
		case r >= 0x30 && r <= 0x7e:
			s.state, s.seq = stText, 0
		case r == esc:
			s.seq = 1
		case r < 0x20 && r != '\n' && r != can && r != sub:
			// a control inside the sequence: dropped, the sequence goes on
		default:
			s.state, s.seq = stText, 0
			return s.text(dst, r, invalid)
		}
		return dst
	case stEscInter: // intermediates 0x20–0x2f, then a final 0x30–0x7e
		return s.inSequence(dst, r, 0x2f, invalid)
	case stCSI: // parameters and intermediates 0x20–0x3f, then a final 0x40–0x7e
		return s.inSequence(dst, r, 0x3f, invalid)
	case stString:
		switch {
		case r == bel || r == 0x9c || r == can || r == sub:
			s.state, s.seq = stText, 0
		case r == esc:
			s.state = stStrEsc
		case r == '\n':
			s.state, s.seq = stText, 0
			return append(dst, '\n')
		}
		return dst
	case stStrEsc:
		if r == '\\' {
			s.state, s.seq = stText, 0
			return dst
		}
		s.state, s.seq = stEsc, 1 // a new sequence ends the string
		return s.rune(dst, r, 0, invalid)
	}
	return s.text(dst, r, invalid)
}

// inSequence handles r inside an escape sequence whose middle bytes are
// 0x20 to last and whose final byte is after last, up to 0x7e: the
// sequence goes on, ends, starts again at ESC, drops a control, or,
// broken by anything else, ends with r kept as text.
func (s *Stream) inSequence(dst []byte, r rune, last rune, invalid bool) []byte {
	switch {
	case r >= 0x20 && r <= last:
	case r > last && r <= 0x7e:
		s.state, s.seq = stText, 0
	case r == esc:
		s.state, s.seq = stEsc, 1
	case r < 0x20 && r != '\n' && r != can && r != sub:
	default:
		s.state, s.seq = stText, 0
		return s.text(dst, r, invalid)
	}
	return dst
}

// text handles r outside any sequence.
func (s *Stream) text(dst []byte, r rune, invalid bool) []byte {
	switch {
	case invalid:
		return utf8.AppendRune(dst, utf8.RuneError)
	case r == '\n' || r == '\t':
		return append(dst, byte(r))
	case r == esc:
		s.state, s.seq = stEsc, 1
		return dst
	case r == 0x9b:
		s.state, s.seq = stCSI, 2
		return dst
	case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
		s.state, s.seq = stString, 2
		return dst
	case Refused(r):
		return dst
	}
	return utf8.AppendRune(dst, r)
}
