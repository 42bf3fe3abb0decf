package initstage

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
	"lnk.dev/lnk/internal/landlock"
)

// Run is lnk-init's first stage: read the plan from planFD, confine,
// exec. lifeline is the read end of lnk's lifeline (lifeline.go), -1 for
// none: hung up already, nothing starts; with a relay, armed so the
// kernel kills the sandbox's processes once it hangs up, and handed to
// the proxy to hold. relayCh is the channel to the proxy on which the
// relay's listener is handed (relay.go), -1 for none; a plan with a relay
// needs it. It returns only on failure.
func Run(planFD, lifeline, relayCh int) error {
	runtime.LockOSThread()
	if lifeline >= 0 && lnkGone(lifeline) {
		return errLnkGone
	}
	p, err := readPlan(planFD)
	if err != nil {
		return err
	}
	cloexecFrom(3) // the lifeline and the channel too: the command never holds them
	if p.Relay != nil {
		if relayCh < 0 {
			return fmt.Errorf("%w: a relay, and no channel to the proxy (--relay-fd)", ErrBadPlan)
		}
		if lifeline >= 0 {
			if err := armLifeline(lifeline); err != nil {
				return err
			}
		}
		if err := handRelay(p.Relay, relayCh, lifeline); err != nil {
			return err
		}
	} else if lifeline >= 0 && lnkGone(lifeline) {
		return errLnkGone
	}
	if err := harden(p); err != nil { // harden.go
		return err
	}
	if err := confine(p); err != nil {
		return err
	}
	err = unix.Exec(p.Path, p.Argv, os.Environ())
	return fmt.Errorf("exec %s: %w", p.Path, err)
}

func readPlan(fd int) (*Plan, error) {
	defer unix.Close(fd)
	// A memfd (or a file): read whole from offset 0, where lnk's writes
	// left the shared offset at its end, by its size.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%w: no plan fd %d: %v", ErrBadPlan, fd, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > MaxPlan {
		return nil, fmt.Errorf("%w: plan fd %d is no file of at most %d bytes", ErrBadPlan, fd, MaxPlan)
	}
	b := make([]byte, st.Size)
	for n := 0; n < len(b); {
		m, err := unix.Pread(fd, b[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: read: %v", ErrBadPlan, err)
		}
		if m == 0 {
			b = b[:n]
			break
		}
		n += m
	}
	return ParsePlan(b)
}

// cloexecFrom marks every fd from lo up close-on-exec: nothing of
// bubblewrap's or the host's reaches the command, and the
// fds Go's runtime opened for itself (its poller, when an inherited stdio
// was non-blocking) stay open for as long as this process runs. Closing
// them instead broke the runtime's poller at random.
func cloexecFrom(lo int) {
	if err := unix.CloseRange(uint(lo), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd >= lo {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}

// confine applies landlock then seccomp to this thread. Where either is
// missing, it fails unless the plan is degraded.
func confine(p *Plan) error {
	rules, fds, err := landlockRules(p)
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if err != nil {
		return err
	}
	if _, err := landlock.RestrictThread(rules...); err != nil {
		if !(p.Degraded && errors.Is(err, landlock.ErrUnsupported)) {
			return err
		}
	}
	if err := loadFilter(); err != nil {
		if !(p.Degraded && errors.Is(err, ErrNoSeccomp)) {
			return err
		}
	}
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

func landlockRules(p *Plan) ([]landlock.Rule, []int, error) {
	var rules []landlock.Rule
	var fds []int
	for _, r := range p.Paths {
		fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if r.Optional {
				continue
			}
			return nil, fds, fmt.Errorf("landlock rule %s: %w", r.Path, err)
		}
		fds = append(fds, fd)
		var right landlock.Right
		if r.Read {
			right |= landlock.Read
		}
		if r.Write {
			right |= landlock.Write
		}
		if r.Exec {
			right |= landlock.Exec
		}
		rules = append(rules, landlock.Beneath(fd, right))
	}
	if p.AnyTCP {
		rules = append(rules, landlock.AnyTCP())
	}
	for _, port := range p.ConnectTCP {
		rules = append(rules, landlock.ConnectTCP(port))
	}
	for _, port := range p.BindTCP {
		rules = append(rules, landlock.BindTCP(port))
	}
	return rules, fds, nil
}
