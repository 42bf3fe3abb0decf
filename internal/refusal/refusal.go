// Package refusal is Link's one shape of a refusal: why (Reason), by
// which rule (Rule), what would allow it (Hint, an `lnk ...` command),
// and the cause beneath (Err). Caps, the kernel, the brokers and the
// services all refuse with a [*Refusal], so the command line prints every
// refusal the same way ("lnk: refused: <reason>", then "hint: <command>")
// and the audit log records its reason once.
//
// A package that refuses keeps its own sentinels: a [*Refusal] made by
// [Sentinel] is matched by errors.Is against any refusal of the same
// rule, and Err carries a cause (a sentinel error, a wire error) that
// errors.Is and errors.As still find. A type that carries more than the
// shape (a path, a handle) embeds a Refusal and adds its fields; a
// repository test (internal/repotest) refuses any other type named like
// a refusal.
//
// # Security
//
// A Reason is shown to the owner and written to the log: it never holds
// a secret. The package holds no authority; it is data.
package refusal

import "errors"

// Refusal is a request refused by a rule.
type Refusal struct {
	// Reason says why, one lowercase line with no secret in it. It is
	// the whole message: Error returns it as it is.
	Reason string
	// Rule is the rule's short name ("dot-folder", "unknown-handle"), or
	// "" where the refusal names none.
	Rule string
	// Hint is the `lnk ...` command (or, where none exists, the
	// sentence) that would allow what was refused, or "".
	Hint string
	// Err is the cause or the sentinel the refusal stands for, or nil.
	Err error
	// sentinel marks a rule's sentinel (see [Sentinel]).
	sentinel bool
}

func (r *Refusal) Error() string { return r.Reason }

// Unwrap returns the cause.
func (r *Refusal) Unwrap() error { return r.Err }

// Is matches a rule's sentinel: errors.Is(err, s) holds for every
// refusal by s's rule, whatever its reason or subject.
func (r *Refusal) Is(target error) bool { return Matches(target, r.Rule) }

// Sentinel makes a rule's sentinel: a refusal that stands for every
// refusal by rule (see [Refusal.Is]).
func Sentinel(rule, reason string) *Refusal {
	return &Refusal{Reason: reason, Rule: rule, sentinel: true}
}

// New makes a refusal saying why.
func New(reason string) *Refusal { return &Refusal{Reason: reason} }

// Of finds the outermost refusal in err's chain.
func Of(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// Final says whether err is a refusal by a rule that a try again would
// meet the same: a refusal (Of) not for now (RuleBusy). What is no
// refusal (nothing answered, nothing could be read) is never final:
// what could not be learned is not taken as a refusal.
func Final(err error) bool {
	_, ok := Of(err)
	return ok && !errors.Is(err, ErrBusy)
}

// RuleOf is the rule of the first refusal in err's chain that names
// one, or "" when none does: a refusal that wraps a rule's refusal (a
// file tool's call refused by a rule beneath it) is still that rule's.
func RuleOf(err error) string {
	for err != nil {
		r, ok := Of(err)
		if !ok {
			return ""
		}
		if r.Rule != "" {
			return r.Rule
		}
		err = r.Err
	}
	return ""
}

// HintOf is the hint of the first refusal in err's chain that has one.
func HintOf(err error) string {
	for err != nil {
		r, ok := Of(err)
		if !ok {
			return ""
		}
		if r.Hint != "" {
			return r.Hint
		}
		err = r.Err
	}
	return ""
}

// Matches reports whether target is the sentinel of rule: an error type
// of a package's own that knows its rule (a spec's parse error) makes
// its Is method with it.
func Matches(target error, rule string) bool {
	t, ok := target.(*Refusal)
	return ok && t.sentinel && rule != "" && t.Rule == rule
}

// RuleBusy is the rule of a refusal for now: what refused is busy or
// not ready yet (a harness starting, an inbox full, its cap of messages
// at once reached), and the same request may be taken later. A caller
// that tries again does so on this rule alone, waiting longer each time;
// every other refusal is final for that request.
const RuleBusy = "busy"

// ErrBusy is RuleBusy's sentinel (errors.Is).
var ErrBusy = Sentinel(RuleBusy, "refused for now: try again later")
