package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// pidfdPid is the pid a pidfd names, from its /proc/self/fdinfo: an fd
// whose fdinfo has no "Pid:" line is no pidfd, and a pidfd of a process
// already reaped (-1, 0) names none.
func pidfdPid(fd int) (int, error) {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, fmt.Errorf("the fd cannot be read: %v", err)
	}
	return parsePidfdInfo(b)
}

// parsePidfdInfo reads the "Pid:" line of a pidfd's fdinfo.
func parsePidfdInfo(info []byte) (int, error) {
	for _, line := range bytes.Split(info, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(k) != "Pid" {
			continue
		}
		pid, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		if err != nil {
			return 0, fmt.Errorf("the pidfd's pid %q is no number", bytes.TrimSpace(v))
		}
		if pid <= 0 {
			return 0, errors.New("the pidfd's process has ended")
		}
		return pid, nil
	}
	return 0, errors.New("the fd is no pidfd")
}
