package sandbox

import (
	"encoding/json"
	"fmt"
	"time"

	"lnk.dev/lnk/internal/audit"
)

// proxyEvent is the part of lnk-netbroker's event (one JSON line on its
// stderr per connection, request or route) the audit log keeps.
type proxyEvent struct {
	Kind     string `json:"kind"`
	Host     string `json:"host"`
	Port     uint16 `json:"port"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
	Status   int    `json:"status"`
	Up       int64  `json:"bytes_up"`
	Down     int64  `json:"bytes_down"`
}

// ProxyLogEntry is the audit-log line of one line the proxy said on its
// stderr, for agent; false for a line that is no event (why it did not
// start), which the caller says elsewhere. Whoever starts the proxy
// (the kernel for an agent's run, lnk for a run of flag grants) logs
// its lines through this one reading.
func ProxyLogEntry(line []byte, agent string) (audit.Entry, bool) {
	var ev proxyEvent
	if json.Unmarshal(line, &ev) != nil || ev.Decision == "" {
		return audit.Entry{}, false
	}
	e := audit.Entry{Time: time.Now(), Kind: audit.KindUse, Agent: agent, Request: "net " + ev.Kind, Reason: ev.Reason,
		Status: ev.Status, BytesUp: ev.Up, BytesDown: ev.Down}
	if ev.Host != "" {
		e.Route = ev.Host
		if ev.Port != 0 {
			e.Route = fmt.Sprintf("%s:%d", ev.Host, ev.Port)
		}
	}
	if ev.Decision == "refuse" {
		e.Kind = audit.KindRefuse
		if ev.Rule != "" {
			e.Reason = ev.Rule + ": " + ev.Reason
		}
	}
	return e, true
}
