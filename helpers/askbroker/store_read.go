package askbroker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// readFile reads a regular 0600 file of the store, never through a link.
func (s *Store) readFile(name string) ([]byte, error) {
	b, err := ownerfile.ReadFile(s.fd, name, ownerfile.Private, maxRecord)
	switch {
	case errors.Is(err, ownerfile.ErrLink):
		return nil, fmt.Errorf("%s %w", name, ErrLink)
	case errors.Is(err, ownerfile.ErrNotOwners):
		return nil, fmt.Errorf("%s (%v) %w", name, err, ErrNotPrivate)
	}
	return b, err
}

// Read returns the waiting question id.
func (s *Store) Read(id string) (*Waiting, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrNoQuestion)
	}
	b, err := s.readFile(id + ".q")
	if errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("%s: %w", id, ErrNoQuestion)
	}
	if err != nil {
		return nil, err
	}
	var w Waiting
	if err := json.Unmarshal(b, &w); err != nil || w.ID != id {
		return nil, fmt.Errorf("question %s is damaged", id)
	}
	w.Question.Clean() // shown as it is, whoever wrote the file
	return &w, nil
}

// ReadAnswer returns question id's answer, and whether it has one.
func (s *Store) ReadAnswer(id string) (Answer, bool, error) {
	var a Answer
	if !ValidID(id) {
		return a, false, fmt.Errorf("%q: %w", id, ErrNoQuestion)
	}
	b, err := s.readFile(id + ".a")
	if errors.Is(err, unix.ENOENT) {
		return a, false, nil
	}
	if err != nil {
		return a, false, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, false, fmt.Errorf("answer to %s is damaged", id)
	}
	return a, true, nil
}

// List returns the questions still waiting for an answer, oldest first.
// A file that is a link or damaged is left out, never followed.
func (s *Store) List() ([]Waiting, error) {
	names, err := s.names()
	if err != nil {
		return nil, err
	}
	var out []Waiting
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".q")
		if !ok || !ValidID(id) {
			continue
		}
		w, err := s.Read(id)
		if err != nil {
			continue
		}
		if _, answered, _ := s.ReadAnswer(id); answered {
			continue
		}
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asked.Before(out[j].Asked) })
	return out, nil
}

func (s *Store) names() ([]string, error) {
	fd, err := ownerfile.OpenDir(s.fd, ".", unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "questions")
	defer f.Close()
	return f.Readdirnames(-1)
}

// Remove takes question id out of the store. Its answer stays behind
// for a while as a tombstone, so an answer racing the removal (read the
// question, then link) still finds the first answer in place and is
// refused, never taken for the winner; Put sweeps old tombstones.
func (s *Store) Remove(id string) {
	if ValidID(id) {
		unix.Unlinkat(s.fd, id+".q", 0)
	}
}

// TombstoneAge is how long an answer outlives its question.
const TombstoneAge = 10 * time.Minute

// sweep removes answers whose question has been gone for TombstoneAge,
// and temp files as old; at most once a minute.
func (s *Store) sweep(now time.Time) {
	s.sweepMu.Lock()
	if now.Sub(s.swept) < time.Minute {
		s.sweepMu.Unlock()
		return
	}
	s.swept = now
	s.sweepMu.Unlock()
	names, err := s.names()
	if err != nil {
		return
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, n := range names {
		id, isAnswer := strings.CutSuffix(n, ".a")
		// ".tmp-" is a temp file's name from before ownerfile.CreateTemp.
		temp := strings.HasPrefix(n, "."+tempName+".tmp-") || strings.HasPrefix(n, ".tmp-")
		if !(isAnswer && !have[id+".q"]) && !temp {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(s.fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Sub(time.Unix(st.Mtim.Unix())) > TombstoneAge {
			unix.Unlinkat(s.fd, n, 0)
		}
	}
}
