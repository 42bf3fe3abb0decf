package runtool

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNotACommand is a program the agent's [commands] does not name.
var ErrNotACommand = errors.New("not in the agent's [commands]")

// checkCommand is the tool's own check of argv[0] against [commands],
// before any sandbox starts, so the caller sees why in words. The
// sandbox enforces the list again (it resolves each program to its
// files); this check never allows more than the list names: a program
// named as an entry is, or as a path whose last name is an entry's.
// With "*" nothing is looked at here: a program named by its path is
// left for the sandbox to find, so a call learns nothing of what exists
// outside it.
func checkCommand(argv, commands []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("no command given: argv names the program first")
	}
	for i, a := range argv {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %d holds a NUL byte", i)
		}
	}
	prog := argv[0]
	for _, c := range commands {
		if c == "*" {
			return nil
		}
	}
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		return fmt.Errorf("%s: %w (a program is named by its name or its absolute path)", prog, ErrNotACommand)
	}
	base := filepath.Base(prog)
	for _, c := range commands {
		if c == prog {
			return nil
		}
		// A name and a path of the same last name: the sandbox tells
		// whether they are one program. Two paths must be the same.
		if strings.Contains(c, "/") != strings.Contains(prog, "/") && filepath.Base(c) == base {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", prog, ErrNotACommand)
}
