package agentlife

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/procstat"
)

// stopPoll is how often Stop looks whether the supervisor let go.
const stopPoll = 20 * time.Millisecond

// Stop ends agent a's supervisor, which ends its harness's whole group
// (and with it the sandbox and everything in it), and returns whether
// one ran. A supervisor still holding its lock after wait is killed,
// its harness then ending by PR_SET_PDEATHSIG. Last, what a supervisor
// killed earlier left of a harness's group (sandbox off) is swept.
func Stop(home string, a *caps.Agent, wait time.Duration) (bool, error) {
	if ever, err := everStarted(home, a.ID); err != nil || !ever {
		return false, err // never started: nothing runs, and nothing is made for it
	}
	sd, err := stateDir(home, a.ID)
	if err != nil {
		return false, err
	}
	defer sd.Close()
	rec, err := ReadRecord(home, a.ID)
	if err != nil {
		return false, err
	}
	held, err := lockHeld(int(sd.Fd()))
	if err != nil {
		return false, err
	}
	if held && (rec == nil || !alive(rec.PID, rec.PIDStart)) {
		// A supervisor that is ending (killed: its threads still
		// exiting) holds its lock a moment longer than its pid.
		if !waitUnlocked(int(sd.Fd()), stopGrace) {
			return true, fmt.Errorf("agent %s's lock is held, but its record names no supervisor that runs: nothing was signalled", a.Name)
		}
		held = false
	}
	if held {
		unix.Kill(rec.PID, unix.SIGTERM)
		if !waitUnlocked(int(sd.Fd()), wait) {
			if alive(rec.PID, rec.PIDStart) {
				unix.Kill(rec.PID, unix.SIGKILL)
			}
			if !waitUnlocked(int(sd.Fd()), stopGrace) {
				return true, fmt.Errorf("agent %s's supervisor (pid %d) still holds its lock after SIGKILL", a.Name, rec.PID)
			}
		}
		// It lets go of its lock as it returns: stop ends when it did.
		waitEnded(rec.PID, rec.PIDStart, stopGrace)
	}
	if err := sweepLeft(rec); err != nil {
		return held, err
	}
	return held, nil
}

// sweepLeft kills what is left of the harness's group rec names, in this
// boot.
func sweepLeft(rec *Record) error {
	if rec == nil || rec.HarnessPID <= 0 {
		return nil
	}
	boot, err := procstat.BootID()
	if err != nil {
		return err
	}
	if rec.Boot != boot {
		return nil
	}
	_, err = sweepGroup(rec.HarnessPID, rec.HarnessStart)
	return err
}

// waitUnlocked waits up to d for the lock to be free.
func waitUnlocked(dirfd int, d time.Duration) bool {
	end := time.Now().Add(d)
	for {
		held, err := lockHeld(dirfd)
		if err == nil && !held {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(stopPoll)
	}
}

// waitEnded waits up to d for pid (started at start) to end.
func waitEnded(pid int, start uint64, d time.Duration) {
	for end := time.Now().Add(d); alive(pid, start) && time.Now().Before(end); {
		time.Sleep(stopPoll)
	}
}
