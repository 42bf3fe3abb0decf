package scheduler

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/toolname"
)

// Job is one job, Agent/schedule/<id>.json.
type Job struct {
	ID     string `json:"id"`     // 16 hex digits
	Thread string `json:"thread"` // the conversation it was made in, and fires into
	// Hops is the hops of the message it fires: the making call's
	// (_meta link.local/hops) and one.
	Hops    int       `json:"hops"`
	Text    string    `json:"text"`
	At      time.Time `json:"at,omitzero"`    // a one-off job's time (UTC)
	Cron    string    `json:"cron,omitempty"` // a recurring job's times, in the owner's time zone
	Next    time.Time `json:"next"`           // its next firing (UTC)
	Created time.Time `json:"created"`
	Last    time.Time `json:"last,omitzero"` // its last firing
	// Task, when set, makes the job a subagent's start (start_subagent):
	// it fires once, as a message from task-<id> into the subagent's own
	// conversation task-<id>, and its answer comes back to Thread.
	Task *Task `json:"task,omitempty"`
	// Retry, when set, is its firing not taken for now: kept with the
	// job so the runner's restart (the agent's) waits out the wait too.
	Retry *Retry `json:"retry,omitempty"`
}

// Retry is a job's firing not taken for now (retry.go).
type Retry struct {
	At    time.Time `json:"at"`           // not tried again before
	Wait  int       `json:"wait_seconds"` // the wait after its last try
	Tries int       `json:"tries"`
}

// Task is a subagent's start: its tools and its model.
type Task struct {
	// Tools are the granted names of the tools the subagent has: its
	// parent's or fewer. Never null ([] is none).
	Tools []string `json:"tools"`
	// Model is the model it runs on; "" the agent's own.
	Model string `json:"model,omitempty"`
	// Started is when its start was handed on (taken or refused): the
	// job then fires no more and is kept, for KeepStarted, as the record
	// that task-<id> is a subagent of Thread's, whose jobs Thread lists
	// and cancels.
	Started time.Time `json:"started,omitzero"`
}

// KeepStarted is how long a subagent's started start is kept.
const KeepStarted = 30 * 24 * time.Hour

// started reports whether j is a subagent's start already handed on.
func (j *Job) started() bool { return j.Task != nil && !j.Task.Started.IsZero() }

// Subagent is the sender and conversation of job id's subagent.
func Subagent(id string) string { return "task-" + id }

// maxTaskTools bounds a subagent's tool list.
const maxTaskTools = 256

// Limits of a job.
const (
	MaxText = 4 << 10 // a job's message, bytes
	maxJob  = 16 << 10
)

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// ParseJob reads a job file strictly.
func ParseJob(b []byte) (*Job, error) {
	if len(b) > maxJob {
		return nil, errors.New("a job file is larger than 16 KiB")
	}
	var j Job
	if err := decodeStrict(b, &j); err != nil {
		return nil, err
	}
	if err := j.check(); err != nil {
		return nil, err
	}
	return &j, nil
}

func (j *Job) check() error {
	switch {
	case !validID(j.ID):
		return fmt.Errorf("job id %q is not 16 hex digits", j.ID)
	case j.Thread == "" || j.Text == "" || len(j.Text) > MaxText:
		return errors.New("a job names no conversation, or its message is empty or over 4 KiB")
	case j.Hops < 1:
		return errors.New("a job's hops are at least 1")
	case (j.Cron == "") == j.At.IsZero():
		return errors.New("a job is either at a time or recurring (cron), not both or neither")
	case j.Next.IsZero():
		return errors.New("a job has no next firing")
	}
	if r := j.Retry; r != nil {
		if r.At.IsZero() || r.Tries < 1 || r.Wait < int(firstRetry/time.Second) || r.Wait > int(maxRetry/time.Second) {
			return errors.New("a job's retry names its time, its tries (at least 1) and its wait (60 to 3600 seconds)")
		}
	}
	if t := j.Task; t != nil {
		if t.Tools == nil || len(t.Tools) > maxTaskTools || j.Cron != "" {
			return errors.New("a subagent's start names its tools (a list, at most 256) and fires once")
		}
		if err := toolname.CheckTools(t.Tools); err != nil {
			return fmt.Errorf("a subagent's start: %w", err)
		}
		if t.Model != "" {
			if err := toolname.CheckModel(t.Model); err != nil {
				return fmt.Errorf("a subagent's start: %w", err)
			}
		}
	}
	if j.Cron != "" {
		if _, err := ParseCron(j.Cron); err != nil {
			return err
		}
	}
	return nil
}

// decodeStrict reads exactly one JSON object into v (jsonscan.Strict:
// every field once, in lower case, none unknown, nothing after).
func decodeStrict(data []byte, v any) error {
	if err := jsonscan.Strict(data, v); err != nil {
		return fmt.Errorf("not the JSON object expected: %w", err)
	}
	return nil
}
