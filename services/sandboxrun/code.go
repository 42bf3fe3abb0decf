package sandboxrun

import (
	"errors"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// Code is the exit status lnk sandbox run gives for err, a run that
// failed before or beside its command (cli/exitcodes.go): 3 a rule
// refused it (the kernel's refusal, a build's, a sealed secret with no
// proxy, grants changed), 4 the agent is missing, 5 this machine lacks
// what the sandbox needs, 1 anything else. A caller that runs sandboxes
// in-process (the run tool) answers with it as lnk would have exited.
func Code(err error) int {
	var we *wire.Error
	var missing *sandbox.MissingError
	var sealed *SealedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &missing):
		return 5
	case errors.As(err, &we) && we.Code == proto.CodeMissing:
		return 4
	case errors.As(err, &we) && we.Code == proto.CodeRefused,
		errors.As(err, &sealed), errors.Is(err, sandbox.ErrFolderChanged), refusal.RuleOf(err) != "":
		return 3
	}
	return 1
}

// Hint is the hint along err's chain (a refusal's, or an error's Hint
// method's), or "".
func Hint(err error) string {
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
