package agentlife

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
)

// RecordFile and LockFile are the supervisor's, in ~/.lnk/agents/<agent id>.
const (
	RecordFile = "supervisor.json"
	LockFile   = "supervisor.lock"
	maxRecord  = 64 << 10
)

// How the supervisor was started (Record.Mode).
const (
	ModeForeground = "foreground" // lnk agent start --foreground, in the terminal
	ModeBackground = "background" // lnk agent start where no user manager runs
	ModeUnit       = "unit"       // the systemd user unit lnk-agent-<agent id>.service
)

// The harness's states (Record.State).
const (
	StateStarting   = "starting"
	StateRunning    = "running"
	StateRestarting = "restarting" // it failed; the supervisor waits to start it again
	StateStopped    = "stopped"    // the supervisor ended
)

// Record is ~/.lnk/agents/<agent id>/supervisor.json, written atomically
// by the supervisor at each change. Whether the agent runs is its lock's,
// never this file's, to say (Status).
type Record struct {
	Agent        string          `json:"agent"`
	ID           string          `json:"id"`
	Mode         string          `json:"mode"`
	PID          int             `json:"pid"`       // the supervisor's
	PIDStart     uint64          `json:"pid_start"` // its start, clock ticks after boot
	Boot         string          `json:"boot"`      // /proc/sys/kernel/random/boot_id
	State        string          `json:"state"`
	Sandbox      bool            `json:"sandbox"`
	Since        time.Time       `json:"since"`         // when the harness last started
	Starts       int             `json:"starts"`        // how many times the supervisor started it
	HarnessPID   int             `json:"harness_pid"`   // leads the harness's process group
	HarnessStart uint64          `json:"harness_start"` // its start, clock ticks after boot
	Ports        *caps.PortBlock `json:"ports,omitempty"`
	Log          string          `json:"log"`
	LastExit     string          `json:"last_exit,omitempty"` // how the harness last ended
	// WebhookPort is where the agent's webhook listener, started with
	// the harness, takes posts on 127.0.0.1; 0: it has no webhook.
	WebhookPort int `json:"webhook_port,omitempty"`
}

// parseRecord reads a record, refusing one that isn't whole: a field
// it doesn't know, or anything after it.
func parseRecord(b []byte) (*Record, error) {
	var r Record
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", RecordFile, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%s: more than one record", RecordFile)
	}
	if r.PID < 0 || r.HarnessPID < 0 || r.Starts < 0 || len(r.ID) != 32 {
		return nil, fmt.Errorf("%s: not a supervisor's record", RecordFile)
	}
	return &r, nil
}

// ReadRecord reads agent id's record; nil, nil when there is none.
func ReadRecord(home, id string) (*Record, error) {
	d, err := stateDir(home, id)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := ownerfile.ReadFile(int(d.Fd()), RecordFile, ownerfile.Private, maxRecord)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseRecord(b)
}

func writeRecord(dirfd int, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return ownerfile.WriteAtomic(dirfd, RecordFile, append(b, '\n'), ownerfile.Write{Mode: 0o600})
}

// ErrRunning is returned when the agent's supervisor already runs.
var ErrRunning = errors.New("the agent is already running")

// openLockFile opens the lock file name in dirfd (made 0600 where
// missing), never through a link.
func openLockFile(dirfd int, name string) (*os.File, error) {
	fd, err := ownerfile.Open(dirfd, name, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, err
	}
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// takeLock opens and locks name in dirfd, held until the returned file
// is closed or the process ends; ErrRunning when another holds it.
func takeLock(dirfd int, name string) (*os.File, error) {
	f, err := openLockFile(dirfd, name)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return f, nil
}

// lockHeld says whether a supervisor holds agent id's lock now.
func lockHeld(dirfd int) (bool, error) {
	f, err := takeLock(dirfd, LockFile)
	if errors.Is(err, ErrRunning) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	f.Close()
	return false, nil
}
