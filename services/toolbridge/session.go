package toolbridge

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// session is one client's session with one tool: a server of its own.
type session struct {
	id     string
	tool   string
	digest string // the definition it started with; another ends it
	read   uint64 // the reading of it the session started with (sawDefinition)
	srv    *server

	mu    sync.Mutex
	last  time.Time
	busy  int
	hints map[string][]string // tool name → hints its listing gave (readOnlyHint, …)
}

func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *session) touch(delta int) {
	s.mu.Lock()
	s.busy += delta
	s.last = time.Now()
	s.mu.Unlock()
}

// idleSince reports how long the session has had no call, and whether one
// is running now.
func (s *session) idleFor(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Sub(s.last), s.busy > 0
}

func (s *session) setHints(h map[string][]string) {
	s.mu.Lock()
	s.hints = h
	s.mu.Unlock()
}

func (s *session) hintsOf(call string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hints[call]
}
