package cli

import "lnk.dev/lnk/internal/beside"

// besideLnk is the path of Link's program name in the folder of Link's
// programs (internal/beside), refused at once with a hint when it is
// missing, rather than left to fail inside bwrap or an exec with a
// message of theirs.
func besideLnk(name string) (string, error) {
	p, err := beside.Program(name)
	if err != nil {
		return "", Fail(ExitFailure, err, beside.Hint)
	}
	return p, nil
}
