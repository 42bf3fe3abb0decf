package endpoint

import (
	"errors"
	"regexp"
)

// fromRE is a sender a message from others names: a schedule, a
// background command, a subagent, a teammate or team (schedule:<id>,
// run:<id>, task-<id>, agent-<id>, team-<id>), or a stranger's name as
// its connection gives it.
var fromRE = regexp.MustCompile(`^(?:(?:schedule|run):[A-Za-z0-9_.-]{1,128}|(?:agent|task|team)-[A-Za-z0-9_.-]{1,128}|stranger:[^\x00-\x1f\x7f]{1,128})$`)

// CheckFrom refuses a Link-From that names no sender.
func CheckFrom(from string) error {
	if !fromRE.MatchString(from) {
		return errors.New("Link-From names no sender")
	}
	return nil
}
