package netbroker

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Event is one line of the wire's log: a connection, a forwarded
// request or a route, with the decision and its reason. It never holds a
// body, a header's value, a query or a secret.
type Event struct {
	Time     time.Time `json:"time"`
	Agent    string    `json:"agent,omitempty"`
	Kind     string    `json:"kind"` // "connect", "http", "route" or "relay"
	Host     string    `json:"host,omitempty"`
	Port     uint16    `json:"port,omitempty"`
	Addr     string    `json:"addr,omitempty"` // the checked address dialed
	Decision string    `json:"decision"`       // "allow" or "refuse"
	Rule     string    `json:"rule,omitempty"` // a refusal's Kind
	Reason   string    `json:"reason,omitempty"`
	Status   int       `json:"status,omitempty"`
	Up       int64     `json:"bytes_up"`
	Down     int64     `json:"bytes_down"`
}

// JSONLog returns a logger writing each event as one JSON line to w,
// the seam the kernel's audit log plugs into.
func JSONLog(w io.Writer) func(Event) {
	var mu sync.Mutex
	return func(e Event) {
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(b, '\n'))
	}
}
