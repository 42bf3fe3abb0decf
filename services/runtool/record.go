package runtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// States of a background command's record.
const (
	StateStarting = "starting" // recorded; its supervisor has not started the sandbox yet
	StateRunning  = "running"  // the sandbox runs: Group names it
	StateEnded    = "ended"    // its group is gone: Reason and Code say how
)

// Reasons a background command ended.
const (
	EndExited   = "exited"           // the command's leader exited: Code is its status
	EndTimeout  = "timeout"          // [tool.run] background_timeout
	EndStopped  = "stopped"          // run__stop, or the agent's stop, restart, move or delete
	EndOrphaned = "supervisor ended" // its supervisor ended without recording the end (a sweep did)
	EndFailed   = "failed"           // the sandbox could not start: Error says why
)

// Proc names one process for good: its pid and its start time (clock
// ticks after boot, /proc/PID/stat field 22) on the record's boot.
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Record is a background command's record (see the package doc).
type Record struct {
	ID         string    `json:"id"`
	Thread     string    `json:"thread"`
	Hops       int       `json:"hops,omitempty"` // the starting call's (_meta); its ending comes at one more
	Argv       []string  `json:"argv"`
	Folder     string    `json:"folder"`
	State      string    `json:"state"`
	Started    time.Time `json:"started"`
	Boot       string    `json:"boot"`
	Supervisor Proc      `json:"supervisor"`
	Group      Proc      `json:"group"` // its leader; the group's ID is the leader's pid
	Timeout    string    `json:"timeout"`
	Ended      time.Time `json:"ended"`
	Reason     string    `json:"reason"`
	Code       int       `json:"code"`
	Output     int64     `json:"output"` // bytes printed
	Cut        bool      `json:"cut"`    // more than background_output printed
	Error      string    `json:"error"`
	Told       time.Time `json:"told"` // when its ending reached the agent
}

// maxRecord bounds a record file as read.
const maxRecord = 1 << 20

// ParseRecord reads a record strictly: an unknown field, a bad ID, an
// unknown state or a running record naming no group is refused.
func ParseRecord(b []byte) (*Record, error) {
	var r Record
	if err := decodeStrict(b, &r); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if !validID(r.ID) {
		return nil, fmt.Errorf("record: id %q is not a background command's ID", r.ID)
	}
	switch r.State {
	case StateStarting, StateEnded:
	case StateRunning:
		if r.Group.PID <= 1 || r.Supervisor.PID <= 1 || r.Boot == "" {
			return nil, errors.New("record: running, but naming no group, supervisor or boot")
		}
	default:
		return nil, fmt.Errorf("record: state %q is none of starting, running, ended", r.State)
	}
	if r.Group.PID < 0 || r.Supervisor.PID < 0 || r.Output < 0 {
		return nil, errors.New("record: a negative pid or size")
	}
	if len(r.Argv) == 0 {
		return nil, errors.New("record: no command")
	}
	return &r, nil
}

func (r *Record) encode() []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic("runtool: a record that does not encode: " + err.Error())
	}
	return append(b, '\n')
}
