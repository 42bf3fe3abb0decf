package memsock

import "fmt"

// MaxOwner bounds an owner's name: the 32 bytes of a Linux login name
// (utmp's UT_NAMESIZE, useradd's limit on Debian).
const MaxOwner = 32

// CheckOwner refuses what cannot be an owner's name as Link records it
// (a login name, or a uid where the user has none). An owner's name is a
// folder's name under Agents/.memory, so beyond POSIX's portable set
// (letters, digits, '.', '_', '-', never a leading '-') and Debian's
// trailing '$' of machine accounts, it is never empty, never '.', '..'
// or hidden (a leading '.'), and never holds '/' or NUL.
func CheckOwner(name string) error {
	if name == "" || len(name) > MaxOwner || name[0] == '-' || name[0] == '.' {
		return fmt.Errorf("%q is not an owner's name", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '.', c == '_', c == '-':
		case c == '$' && i == len(name)-1 && i > 0:
		default:
			return fmt.Errorf("%q is not an owner's name", name)
		}
	}
	return nil
}
