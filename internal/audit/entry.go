package audit

import (
	"encoding/json"
	"time"

	"lnk.dev/lnk/internal/textsafe"
)

// Kind is what an audit line records. The zero value is invalid.
type Kind string

// The kinds of line the log holds.
const (
	KindGrant    Kind = "grant"    // a capability made at an agent's start
	KindRevoke   Kind = "revoke"   // capabilities taken back at a stop
	KindUse      Kind = "use"      // a capability used
	KindRefuse   Kind = "refuse"   // a request, connection or use refused, with its reason
	KindQuestion Kind = "question" // a question put to the owner
	KindKernel   Kind = "kernel"   // the kernel started, stopped, or started a broker again
	KindWarn     Kind = "warn"     // a start with less than the sandbox's whole confinement (--degraded, the host's network)
)

// Peer is who asked: the connecting process's uid and pid (SO_PEERCRED).
type Peer struct {
	UID int `json:"uid"`
	PID int `json:"pid"`
}

// Entry is one line of the log. It names what happened and why, never a
// file's contents, a call's arguments, an answer or a secret.
type Entry struct {
	Time    time.Time `json:"time"`
	Kind    Kind      `json:"kind"`
	Agent   string    `json:"agent,omitempty"`
	Start   uint64    `json:"start,omitempty"`   // the agent's start the capability is bound to
	Request string    `json:"request,omitempty"` // the request's name, as in the request table
	Cap     string    `json:"cap,omitempty"`     // a capability's short id (never the whole handle)
	Rights  string    `json:"rights,omitempty"`
	Route   string    `json:"route,omitempty"` // a folder, a broker, a tool's route
	Peer    *Peer     `json:"peer,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Count   int       `json:"count,omitempty"`
	// A network connection's or route's HTTP status and bytes each way
	// (the wire's lines); never what the bytes were.
	Status    int   `json:"status,omitempty"`
	BytesUp   int64 `json:"bytes_up,omitempty"`
	BytesDown int64 `json:"bytes_down,omitempty"`
}

// maxField is the longest a string field may be once written.
const maxField = 512

func clean(s string) string {
	if len(s) > maxField {
		s = s[:maxField]
	}
	return textsafe.Line(s)
}

// line encodes e as one JSON line, its strings made safe to print.
func (e Entry) line() ([]byte, error) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	e.Kind = Kind(clean(string(e.Kind)))
	e.Agent = clean(e.Agent)
	e.Request = clean(e.Request)
	e.Cap = clean(e.Cap)
	e.Rights = clean(e.Rights)
	e.Route = clean(e.Route)
	e.Reason = clean(e.Reason)
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
