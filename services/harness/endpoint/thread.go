package endpoint

import (
	"errors"
	"strings"
)

// checkThread is store.CheckThread, the one rule of a thread's name.
// TEMPORARY until h-store publishes it: refuses all but letters, digits,
// '-', '_', '.' and one ':'.
func checkThread(name string) error {
	if name == "" || len(name) > 128 || name == "." || name == ".." || strings.Count(name, ":") > 1 ||
		strings.ContainsFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r))
		}) {
		return errors.New("not a thread's name")
	}
	return nil
}
