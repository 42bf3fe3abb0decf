package cli

import (
	"errors"
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/textsafe"
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
// A refusal (a rule's, exit 3, or any in internal/refusal's one shape,
// wherever it was made: caps, the kernel, a broker, a service) reads
// "lnk: refused: why", the same way whichever part refused. An error's
// text often names what an agent or a tool made (a file name, a peer's
// reason), so it and each hint print through textsafe.Line: one line, no
// control, bidi or zero-width character reaches the owner's terminal.
func Render(err error) string {
	var b strings.Builder
	msg := renderLine(err.Error())
	if isRefusal(err) {
		msg = "refused: " + strings.TrimPrefix(strings.TrimPrefix(msg, "refused: "), "refused ")
	}
	fmt.Fprintf(&b, "lnk: %s\n", msg)
	var ex *ExitError
	if errors.As(err, &ex) {
		for _, h := range ex.Hints {
			fmt.Fprintf(&b, "  hint: %s\n", renderLine(h))
		}
	}
	if ex == nil || len(ex.Hints) == 0 {
		if h := hintOf(err); h != "" {
			fmt.Fprintf(&b, "  hint: %s\n", renderLine(h))
		}
	}
	return b.String()
}

// renderLine is s as Render prints it: newlines made spaces, then
// textsafe.Line.
func renderLine(s string) string {
	return textsafe.Line(strings.ReplaceAll(s, "\n", " "))
}

// isRefusal reports whether err is a refusal: one of internal/refusal's
// shape, or an error the command marked as a rule's (exit 3).
func isRefusal(err error) bool {
	if _, ok := refusal.Of(err); ok {
		return true
	}
	var ex *ExitError
	return errors.As(err, &ex) && ex.Code == ExitRefused
}

// hintOf is the first hint along err's chain: a refusal's (its Hint),
// or one from an error with a Hint method.
func hintOf(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if r, ok := e.(*refusal.Refusal); ok && r.Hint != "" {
			return r.Hint
		}
		if h, ok := e.(interface{ Hint() string }); ok && h.Hint() != "" {
			return h.Hint()
		}
	}
	return ""
}

// CodeOf is the exit code for err: an ExitError's own, a rule's refusal
// (a refusal naming its rule, or an error with a Rule() method) 3,
// anything else 1.
func CodeOf(err error) int {
	var ex *ExitError
	if errors.As(err, &ex) {
		return ex.Code
	}
	var r interface{ Rule() string }
	if refusal.RuleOf(err) != "" || errors.As(err, &r) {
		return ExitRefused
	}
	return ExitFailure
}

// ruleOf is the rule err names: a refusal's, or an error's Rule method's.
func ruleOf(err error) string {
	if rule := refusal.RuleOf(err); rule != "" {
		return rule
	}
	var r interface{ Rule() string }
	if errors.As(err, &r) {
		return r.Rule()
	}
	return ""
}
