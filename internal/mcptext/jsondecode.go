package mcptext

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeString decodes the JSON string whose opening quote is b[i]: its
// value, and end, the index just past its closing quote. ok is false
// where b[i:] does not start with a valid JSON string. It is the mirror of
// [AppendString]: the value is encoding/json's for the same string (the
// bytes json.Unmarshal puts in a string), and it refuses what
// encoding/json refuses:
//
//   - a byte below 0x20 in the string, an escape other than \" \\ \/ \b
//     \f \n \r \t \uXXXX, a string with no closing quote;
//   - each byte of invalid UTF-8 is decoded as U+FFFD;
//   - a \u escape of a surrogate is joined with the \u escape after it
//     where the two make a pair, else decoded as U+FFFD (the escape after
//     it then decoded on its own).
//
// FuzzDecodeString holds it to encoding/json. A text is mostly runs of
// bytes that stand for themselves: they are passed over eight at a time
// (a word tested at once for a quote, a backslash, a control byte or a
// byte past ASCII) and copied in one write, where encoding/json scans
// the string twice a byte at a time (once to check the JSON, once to
// unquote it) and copies it twice.
func DecodeString(b []byte, i int) (s string, end int, ok bool) {
	if i < 0 || i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	q, ok := closingQuote(b, i+1)
	if !ok {
		return "", i, false
	}
	s, ok = unquote(b[i+1 : q])
	if !ok {
		return "", i, false
	}
	return s, q + 1, true
}

// closingQuote is the index of the first quote not escaped in b[i:]: the
// end of the string whose text starts at b[i]. What lies before it is
// not checked here.
func closingQuote(b []byte, i int) (int, bool) {
	for i < len(b) {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			m := (below(w^'"'*ones, 1) | below(w^'\\'*ones, 1)) & highs
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8 // the first quote or backslash
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			return i, true
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return i, false
}

// unquote is the value of a JSON string's text s (between its quotes,
// holding no quote not escaped), or ok false where s is not valid in a
// JSON string. A text of plain runs alone is copied once; else the
// value is built in one buffer of the text's size, grown only for
// invalid UTF-8 (each such byte written as U+FFFD's three).
func unquote(s []byte) (string, bool) {
	var out strings.Builder
	built := false // out holds s[:start], decoded
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) {
			m := needLook(binary.LittleEndian.Uint64(s[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8 // the first byte needing a look
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		} else if c != '\\' {
			return "", false // a control byte (a quote ends the text before)
		}
		if !built {
			out.Grow(len(s))
			built = true
		}
		out.Write(s[start:i])
		if c >= utf8.RuneSelf { // a byte of invalid UTF-8
			out.WriteRune(utf8.RuneError)
			i++
			start = i
			continue
		}
		n, ok := unescape(&out, s[i:])
		if !ok {
			return "", false
		}
		i += n
		start = i
	}
	if !built {
		return string(s), true
	}
	out.Write(s[start:])
	return out.String(), true
}

// unescape writes the value of the escape at the start of s (s[0] is a
// backslash) to out: how many bytes of s it took, or ok false where it
// is not one JSON allows.
func unescape(out *strings.Builder, s []byte) (int, bool) {
	if len(s) < 2 {
		return 0, false
	}
	switch c := s[1]; c {
	case '"', '\\', '/':
		out.WriteByte(c)
	case 'b':
		out.WriteByte('\b')
	case 'f':
		out.WriteByte('\f')
	case 'n':
		out.WriteByte('\n')
	case 'r':
		out.WriteByte('\r')
	case 't':
		out.WriteByte('\t')
	case 'u':
		r := hex4(s)
		if r < 0 {
			return 0, false
		}
		if utf16.IsSurrogate(r) {
			if pair := utf16.DecodeRune(r, hex4(s[6:])); pair != utf8.RuneError {
				out.WriteRune(pair)
				return 12, true
			}
			r = utf8.RuneError // a surrogate not in a pair
		}
		out.WriteRune(r)
		return 6, true
	default:
		return 0, false
	}
	return 2, true
}

// hex4 is the code of the \uXXXX escape at the start of s, or -1 where s
// does not start with one.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
