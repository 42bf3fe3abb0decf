package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
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
// posts in flight. A taken post's id counts at once (a repeat is
// refused), and its taker is told only once a write of the whole record
// holding it is durable (600, never through a link, fsynced): posts
// taken while a write is under way share the next one (a group commit).
type seen struct {
	mu       sync.Mutex
	dir      *os.File
	taken    map[string]time.Time
	kept     []keptID // what the next write holds
	inFlight map[string]bool
	waiters  []chan error // takers whose ids the next write records
	writing  bool         // a writer runs
}

// keptID is one of the record's entries, its JSON made once, when it
// was taken: a write joins them rather than encode the whole map again.
type keptID struct {
	key  string
	at   time.Time
	json []byte // "<key>":"<at>"
}

func newKept(key string, at time.Time) (keptID, error) {
	k, err := json.Marshal(key)
	if err != nil {
		return keptID{}, err
	}
	t, err := json.Marshal(at)
	if err != nil {
		return keptID{}, err
	}
	return keptID{key: key, at: at, json: append(append(k, ':'), t...)}, nil
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
	for k, at := range s.taken {
		e, err := newKept(k, at)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SeenName, err)
		}
		s.kept = append(s.kept, e)
	}
	slices.SortFunc(s.kept, func(a, b keptID) int { return a.at.Compare(b.at) })
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

// drop ends key's flight: the post was not taken, and is kept nowhere.
func (s *seen) drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inFlight, key)
}

// take records key as taken at now and returns once a write holding it
// is durable, or with that write's error: the id still counts (a repeat
// is refused while the listener runs, and the next write keeps it), but
// it was not kept on disk.
func (s *seen) take(key string, now time.Time) error {
	at := now.UTC().Truncate(time.Second)
	e, err := newKept(key, at)
	done := make(chan error, 1)
	s.mu.Lock()
	delete(s.inFlight, key)
	s.taken[key] = at
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.kept = append(s.kept, e)
	s.waiters = append(s.waiters, done)
	if !s.writing {
		s.writing = true
		go s.write()
	}
	s.mu.Unlock()
	return <-done
}

// write writes the record whole for every taker waiting, again and
// again while more arrive, then ends. One runs at a time.
func (s *seen) write() {
	for {
		s.mu.Lock()
		batch := s.waiters
		s.waiters = nil
		if len(batch) == 0 {
			s.writing = false
			s.mu.Unlock()
			return
		}
		s.prune(time.Now())
		n := 2
		for _, e := range s.kept {
			n += len(e.json) + 1
		}
		data := make([]byte, 0, n)
		data = append(data, '{')
		for i, e := range s.kept {
			if i > 0 {
				data = append(data, ',')
			}
			data = append(data, e.json...)
		}
		data = append(data, '}')
		s.mu.Unlock()
		var err error
		if len(data) > maxSeenFile {
			err = fmt.Errorf("it would be larger than %d MiB, which it is never read past", maxSeenFile>>20)
		} else {
			err = ownerfile.WriteAtomic(int(s.dir.Fd()), SeenName, data, ownerfile.Write{Mode: 0o600})
		}
		for _, w := range batch {
			w <- err
		}
	}
}

// prune forgets the ids taken KeepSeen or more before now (s.mu held).
// Every entry is looked at: the clock may have gone back between two.
func (s *seen) prune(now time.Time) {
	s.kept = slices.DeleteFunc(s.kept, func(e keptID) bool {
		if now.Sub(e.at) < KeepSeen {
			return false
		}
		if s.taken[e.key].Equal(e.at) {
			delete(s.taken, e.key)
		}
		return true
	})
}
