package cli

import (
	"errors"
	"fmt"
	"strings"
)

// ExitError carries an exit code and hint lines with an error. Its
// message is one lowercase line saying why; each hint is a command or a
// sentence that would do what the owner meant.
type ExitError struct {
	Code   int
	Err    error
	Hints  []string
	Silent bool // the command already said everything; exit with Code only
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Fail returns an error with code and hints.
func Fail(code int, err error, hints ...string) error {
	return &ExitError{Code: code, Err: err, Hints: hints}
}

// Usage is a refusal of the command line itself (exit 2).
func Usage(msg string, hints ...string) error {
	return &ExitError{Code: ExitUsage, Err: errors.New(msg), Hints: hints}
}

// Refused is a refusal by a rule (exit 3): the command was understood, and
// what it asked for is not allowed.
func Refused(err error, hints ...string) error {
	return &ExitError{Code: ExitRefused, Err: err, Hints: hints}
}

// Render formats err as the owner sees it: "lnk: why", then "  hint: …".
func Render(err error) string {
	var b strings.Builder
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(&b, "lnk: %s\n", msg)
	var ex *ExitError
	if errors.As(err, &ex) {
		for _, h := range ex.Hints {
			fmt.Fprintf(&b, "  hint: %s\n", h)
		}
	}
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" && (ex == nil || len(ex.Hints) == 0) {
		fmt.Fprintf(&b, "  hint: %s\n", h.Hint())
	}
	return b.String()
}

// CodeOf is the exit code for err: an ExitError's own, a rule's refusal
// (an error with a Rule() method) 3, anything else 1.
func CodeOf(err error) int {
	var ex *ExitError
	if errors.As(err, &ex) {
		return ex.Code
	}
	var r interface{ Rule() string }
	if errors.As(err, &r) {
		return ExitRefused
	}
	return ExitFailure
}
