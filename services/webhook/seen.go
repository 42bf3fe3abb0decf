package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// SeenName is the record of the posts the harness took.
const SeenName = "hooks-seen.json"

// KeepSeen is how long a taken post's id is kept: a repeat inside it is
// refused.
const KeepSeen = 30 * 24 * time.Hour

const maxSeenFile = 64 << 20

// ErrRepeat is a post whose id was taken already, or is being handed on.
var ErrRepeat = errors.New("a repeat of a post already taken or being handed on")

// seen is hooks-seen.json ("<hook id> <post id>" → when taken) and the
// posts in flight. Every change is written whole (600, never through a
// link) before it counts.
type seen struct {
	mu       sync.Mutex
	dir      *os.File
	taken    map[string]time.Time
	inFlight map[string]bool
}

func openSeen(dir *os.File) (*seen, error) {
	s := &seen{dir: dir, taken: map[string]time.Time{}, inFlight: map[string]bool{}}
	data, err := ownerfile.ReadFile(int(dir.Fd()), SeenName, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}, maxSeenFile)
	if errors.Is(err, unix.ENOENT) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", SeenName, err)
	}
	if err := json.Unmarshal(data, &s.taken); err != nil {
		return nil, fmt.Errorf("%s: %w", SeenName, err)
	}
	return s, nil
}

// begin marks key in flight, refusing a repeat.
func (s *seen) begin(key string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.taken[key]; (ok && now.Sub(t) < KeepSeen) || s.inFlight[key] {
		return ErrRepeat
	}
	s.inFlight[key] = true
	return nil
}

// end ends key's flight; a taken post is recorded and written whole
// first, and an error writing it is returned (the post was taken, but its
// id could not be kept).
func (s *seen) end(key string, taken bool, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inFlight, key)
	if !taken {
		return nil
	}
	for k, t := range s.taken {
		if now.Sub(t) >= KeepSeen {
			delete(s.taken, k)
		}
	}
	s.taken[key] = now.UTC().Truncate(time.Second)
	data, err := json.Marshal(s.taken)
	if err != nil {
		return err
	}
	return ownerfile.WriteAtomic(int(s.dir.Fd()), SeenName, data, ownerfile.Write{Mode: 0o600})
}
