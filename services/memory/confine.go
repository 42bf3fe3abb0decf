package memory

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/ownerfile"
)

// Rules is what Link Memory's landlock domain holds for this agent: its
// Home, chats/ and skills/ read; its Agent/memory/ (the notes and the
// index's folder) read and written; nothing else of it. The fds are
// returned for the caller to close once confined.
func (a *Agent) Rules() ([]landlock.Rule, []int, error) {
	rules := []landlock.Rule{
		landlock.Beneath(a.home, landlock.Read),
		landlock.Beneath(a.mem, landlock.Read|landlock.Write),
	}
	var fds []int
	for _, name := range []string{"chats", "skills"} {
		fd, err := ownerfile.Open(a.own, name, unix.O_PATH|unix.O_DIRECTORY, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			for _, f := range fds {
				unix.Close(f)
			}
			return nil, nil, fmt.Errorf("agent %s: its %s: %w", a.ID, name, err)
		}
		fds = append(fds, fd)
		rules = append(rules, landlock.Beneath(fd, landlock.Read))
	}
	return rules, fds, nil
}
