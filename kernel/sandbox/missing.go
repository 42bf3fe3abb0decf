package sandbox

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
	"lnk.dev/lnk/internal/initstage"
	"lnk.dev/lnk/internal/landlock"
)

// ErrMissing is a kernel (or machine) without what the sandbox needs.
var ErrMissing = errors.New("this machine lacks what the sandbox needs")

// MissingError names what is missing.
type MissingError struct{ What []string }

func (e *MissingError) Error() string {
	return "this machine lacks " + strings.Join(e.What, " and ") + ", which the sandbox needs"
}
func (e *MissingError) Unwrap() error { return ErrMissing }

// Hint says what the owner can do.
func (e *MissingError) Hint() string {
	return "use a kernel with landlock and seccomp (lsm=landlock,…), or pass --degraded to run with less"
}

// seccompAvailable reports whether the kernel filters syscalls and
// lnk-init has a filter for this machine's architecture to load (it
// embeds amd64's alone): without one, the sandbox runs unfiltered, which
// only --degraded allows, and the status never claims a filter.
func seccompAvailable() bool {
	if !initstage.HasFilter() {
		return false
	}
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil
}

// noexecAvailable reports whether the kernel has mount_setattr (Linux
// 5.12), with which lnk-init remounts what the sandbox writes noexec: an
// empty change on no fd answers EBADF, or ENOSYS where it is missing.
func noexecAvailable() bool {
	err := unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{})
	return !errors.Is(err, unix.ENOSYS)
}

// enforceable says what this kernel can enforce, and refuses unless
// degraded where landlock, seccomp or mount_setattr is missing.
func enforceable(degraded bool) (Enforced, error) {
	en := Enforced{LandlockABI: landlock.ABI(), Seccomp: seccompAvailable(), noexec: noexecAvailable()}
	en.Landlock = en.LandlockABI > 0
	en.Degraded = degraded && (!en.Landlock || !en.Seccomp || !en.noexec)
	if m := missingNames(en); len(m) > 0 && !degraded {
		return en, &MissingError{What: m}
	}
	return en, nil
}

func missingNames(en Enforced) []string {
	var m []string
	if !en.Landlock {
		m = append(m, "landlock")
	}
	if !en.Seccomp {
		m = append(m, "seccomp")
	}
	if !en.noexec {
		m = append(m, "mount_setattr (noexec mounts)")
	}
	return m
}
