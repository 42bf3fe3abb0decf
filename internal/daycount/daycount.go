// Package daycount is Link's one record of how many of something an
// agent was given on one day (UTC), for a per-day cap ([tool.run]
// background_per_day, [tool.scheduler] per_day): a small JSON file
// {"day": "YYYY-MM-DD", "<what>": N} in a folder Link holds, read
// strictly (internal/jsonscan), written whole (internal/ownerfile), never
// through a link. A count that can't be read refuses: it never counts as
// none, which would give a fresh day's allowance.
package daycount

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/ownerfile"
)

// File is one count's file: its name in its folder and the key its
// count is kept under.
type File struct {
	Name string // e.g. starts.json
	Key  string // e.g. starts
}

// Count is the count of Day (YYYY-MM-DD, UTC).
type Count struct {
	Day string
	N   int
}

// maxSize bounds what is read of a count's file.
const maxSize = 4096

// Parse reads a count's file strictly: exactly the day and the key, each
// once, a real date and a count not below 0.
func (f File) Parse(b []byte) (Count, error) {
	var m map[string]json.RawMessage
	if err := jsonscan.Strict(b, &m); err != nil {
		return Count{}, fmt.Errorf("%s: %w", f.Name, err)
	}
	raw, ok := m[f.Key]
	if len(m) != 2 || !ok || m["day"] == nil {
		return Count{}, fmt.Errorf("%s: not exactly a day and %s", f.Name, f.Key)
	}
	var c Count
	if err := json.Unmarshal(m["day"], &c.Day); err != nil {
		return Count{}, fmt.Errorf("%s: day: %w", f.Name, err)
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if _, derr := time.Parse(time.DateOnly, c.Day); derr != nil || err != nil || n < 0 {
		return Count{}, fmt.Errorf("%s: day %q or count %s is not one", f.Name, c.Day, raw)
	}
	c.N = n
	return c, nil
}

// Today reads today's count from the folder dirfd (0 on a new day or
// when there is none yet).
func (f File) Today(dirfd int, now time.Time) (Count, error) {
	today := Count{Day: now.UTC().Format(time.DateOnly)}
	b, err := ownerfile.ReadFile(dirfd, f.Name, ownerfile.Private, maxSize)
	if errors.Is(err, os.ErrNotExist) {
		return today, nil
	}
	if err != nil {
		return Count{}, err
	}
	c, err := f.Parse(b)
	if err != nil {
		return Count{}, err
	}
	if c.Day != today.Day {
		return today, nil
	}
	return c, nil
}

// Write replaces the count in the folder dirfd, whole (0600).
func (f File) Write(dirfd int, c Count) error {
	b := fmt.Appendf(nil, "{\"day\": %q, %q: %d}\n", c.Day, f.Key, c.N)
	return ownerfile.WriteAtomic(dirfd, f.Name, b, ownerfile.Write{Mode: 0o600})
}
