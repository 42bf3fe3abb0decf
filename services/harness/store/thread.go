package store

import (
	"fmt"
	"strings"
)

// MaxThread is the longest thread name, in bytes.
const MaxThread = 128

// CheckThread refuses a thread name unless it is made of ASCII letters,
// digits, '-', '_' and '.', with at most one ':' and at most one '~',
// is at most [MaxThread] bytes, and is not "." or "..": a name is one
// folder in chats/, never a path. (A name needs no ':'; "link:<name>"
// and "main" are both threads.)
func CheckThread(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a thread's name is empty")
	case len(name) > MaxThread:
		return fmt.Errorf("a thread's name is %d bytes, over %d", len(name), MaxThread)
	case name == "." || name == "..":
		return fmt.Errorf("thread %q is a path, not a name", name)
	case strings.Count(name, ":") > 1:
		return fmt.Errorf("thread %q has more than one ':'", name)
	case strings.Count(name, "~") > 1:
		return fmt.Errorf("thread %q has more than one '~'", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '~':
		case c == '/':
			return fmt.Errorf("thread %q is a path, not a name", name)
		default:
			return fmt.Errorf("thread %q holds %q: only letters, digits, '-', '_', '.', one ':' and one '~' may", name, rune(c))
		}
	}
	return nil
}
