package resolve

import "strings"

// Caps on a name, checked before any system call.
const (
	MaxName      = 255  // bytes in one component (NAME_MAX)
	MaxPath      = 4095 // bytes in a whole name (PATH_MAX less its NUL)
	MaxComponent = 128  // components in one name
)

// ValidatePath checks a name given to the resolver before anything touches
// the disk. A name is relative to a held folder, "/"-separated, with no
// empty, "." or ".." component (so no leading or trailing "/", no "//",
// no "ln/."), no NUL, and within [MaxName], [MaxPath] and [MaxComponent].
// The single name "." means the held folder itself.
//
// ".." is refused (ErrEscape), never walked; an absolute name is refused
// the same way. Every other malformed name is ErrInvalid. An accepted name
// is already clean: filepath.Clean returns it unchanged and
// filepath.IsLocal holds for it.
func ValidatePath(name string) error {
	if err := validate(name); err != nil {
		return &Error{Op: "check", Path: name, Kind: err}
	}
	return nil
}

// validate returns the class of refusal, or nil.
func validate(name string) error {
	if name == "." {
		return nil
	}
	if name == "" {
		return ErrInvalid
	}
	if name[0] == '/' {
		return ErrEscape
	}
	n, start := 0, 0
	var bad error
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		c := name[start:i]
		start = i + 1
		n++
		switch {
		case c == "..":
			return ErrEscape // ".." outranks every other fault
		case c == "" || c == "." || len(c) > MaxName:
			bad = ErrInvalid
		}
	}
	if bad != nil {
		return bad
	}
	if n > MaxComponent || len(name) > MaxPath || strings.IndexByte(name, 0) >= 0 {
		return ErrInvalid
	}
	return nil
}

// split returns the folder part and the last component of a valid name
// ("a/b/c" → "a/b", "c"; "c" → ".", "c").
func split(name string) (dir, base string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ".", name
	}
	return name[:i], name[i+1:]
}
