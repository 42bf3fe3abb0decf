package mcptext

import (
	"math/bits"
	"unicode/utf8"
)

// AppendString appends s as a JSON string to dst: the bytes encoding/json
// writes for it with HTML escaping off (an Encoder after
// SetEscapeHTML(false), as the go-sdk's JSON-RPC layer encodes): " and \
// escaped, \b \f \n \r \t as such, the other bytes below 0x20 as \u00XX,
// each byte of invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029, everything else as it is. FuzzAppendString holds it to
// encoding/json's bytes.
//
// A page is mostly runs of bytes written as they are: they are passed
// over eight at a time (a word tested at once for a byte that needs a
// look: below 0x20, ", \, or past ASCII) and copied in one append, where
// encoding/json looks each byte up in a table.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is written as it is, not yet appended
	i := 0
	for i < len(s) {
		for i+8 <= len(s) {
			m := needLook(load64(s, i))
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8 // the first byte needing a look
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[b>>4], hexDigit[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigit[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// needLook has the high bit of each of w's eight bytes set (and maybe
// of bytes after the first so marked) where the byte is not written as it
// is with no look: below 0x20, ", \, or past ASCII. Its lowest bit set
// is exactly the first such byte's: a borrow only runs to higher bytes.
func needLook(w uint64) uint64 {
	return (below(w, 0x20) | below(w^'"'*ones, 1) | below(w^'\\'*ones, 1) | w) & highs
}

// below has a high bit set in some byte when one of w's bytes under 0x80
// is below n (n at most 0x80): the borrow it makes in w-n*ones, not
// cleared by &^w. (Which byte it marks may be wrong; that one is, is not.)
func below(w uint64, n uint64) uint64 { return (w - n*ones) &^ w }

// load64 is s[i:i+8] as a little-endian word (one load on amd64).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
