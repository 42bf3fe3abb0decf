package webhook

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// SeenLockName is the lock a listener holds on its agent's record of
// taken posts for its whole life, taken before it reads either file.
const SeenLockName = "hooks-seen.lock"

// ErrListening is a listener refused at its start because another
// listener of the same agent holds the record: two would each fold the
// log into hooks-seen.json and lose the ids the other appended, and a
// replay of one of those would be taken.
var ErrListening = errors.New("another webhook listener of this agent is running")

// lockSeen takes the lock on the record in dirfd (LOCK_EX|LOCK_NB on
// hooks-seen.lock, 600, made when missing, never through a link, never
// blocking on a fifo), held until the file returned is closed or the
// process ends; it is O_CLOEXEC, so no lnk-webhook inherits it. The
// holder writes its pid there, which a refused listener names when it
// can read it (a holder that has not written it yet is named by none).
func lockSeen(dirfd int) (*os.File, error) {
	fd, err := ownerfile.Open(dirfd, SeenLockName, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", SeenLockName, err)
	}
	f := os.NewFile(uintptr(fd), SeenLockName)
	if err := ownerfile.Check(fd, seenRule); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", SeenLockName, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid := holder(fd)
			f.Close()
			if pid > 0 {
				return nil, fmt.Errorf("%w (pid %d holds %s)", ErrListening, pid, SeenLockName)
			}
			return nil, fmt.Errorf("%w (it holds %s)", ErrListening, SeenLockName)
		}
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", SeenLockName, err)
	}
	// The pid is a name for the owner's eyes alone: the lock, not the
	// file's text, is what excludes a second listener.
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := unix.Ftruncate(fd, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", SeenLockName, err)
	}
	if _, err := unix.Pwrite(fd, pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", SeenLockName, err)
	}
	return f, nil
}

// holder is the pid the lock's holder wrote in it, 0 when it can't be
// read as one.
func holder(fd int) int {
	buf := make([]byte, 24)
	n, err := unix.Pread(fd, buf, 0)
	if err != nil || n == 0 {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSuffix(string(buf[:n]), "\n"))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
