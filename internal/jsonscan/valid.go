package jsonscan

// Valid is [encoding/json.Valid] of b — the same grammar (invalid UTF-8
// inside a string taken, as encoding/json takes it), the same nesting
// cap — in a few tight loops rather than the scanner's call a byte: a
// 100 KB answer is checked several times faster. FuzzValid holds it to
// json.Valid; every check at a trust boundary that needs json.Valid's
// answer may use either.
func Valid(b []byte) bool {
	i, ok := validValue(b, validSpace(b, 0), 0)
	return ok && validSpace(b, i) == len(b)
}

// maxDepth is encoding/json's own cap on nesting.
const maxDepth = 10000

// plainByte marks the bytes that stand for themselves in a JSON string.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validSpace is the end of the whitespace at b[i:].
func validSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// validValue is the end of the value at b[i:], or ok false.
func validValue(b []byte, i, depth int) (end int, ok bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i+1)
	case c == '{' || c == '[':
		return validContainer(b, i, depth+1)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	case c == '-' || ('0' <= c && c <= '9'):
		return validNumber(b, i)
	}
	return i, false
}

// validContainer is the end of the object or array opening at b[i].
func validContainer(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	object := b[i] == '{'
	closing := byte(']')
	if object {
		closing = '}'
	}
	i = validSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = validString(b, i+1); !ok {
				return i, false
			}
			if i = validSpace(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = validSpace(b, i+1)
		}
		if i, ok = validValue(b, i, depth); !ok {
			return i, false
		}
		if i = validSpace(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case closing:
			return i + 1, true
		case ',':
			i = validSpace(b, i+1)
		default:
			return i, false
		}
	}
}

// validString is the end of the string whose text starts at b[i] (past
// its opening quote).
func validString(b []byte, i int) (int, bool) {
	for i < len(b) {
		if plainByte[b[i]] {
			i++
			continue
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, false
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		default:
			return i, false // a control character
		}
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// validNumber is the end of the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = validDigits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := validDigits(b, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := validDigits(b, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func validDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
