package toolbridge

import "time"

// Settings are the bridge's limits (tools-and-asking.txt "Sessions",
// "Their settings"): read from Link's settings the bridge is started
// with, never from anything a sandbox can write.
type Settings struct {
	Sessions  int           // tool_sessions: sessions a sandbox keeps at most (8)
	Idle      time.Duration // tool_idle: a session with no call for this long ends (5 minutes)
	Starts    int           // tool_starts: sessions starting at once at most (2)
	StartWait time.Duration // a request still waiting for its turn after this gets 429 (60 s)
}

// DefaultSettings are the spec's.
var DefaultSettings = Settings{Sessions: 8, Idle: 5 * time.Minute, Starts: 2, StartWait: 60 * time.Second}

func (s Settings) orDefaults() Settings {
	d := DefaultSettings
	if s.Sessions > 0 {
		d.Sessions = s.Sessions
	}
	if s.Idle > 0 {
		d.Idle = s.Idle
	}
	if s.Starts > 0 {
		d.Starts = s.Starts
	}
	if s.StartWait > 0 {
		d.StartWait = s.StartWait
	}
	return d
}
