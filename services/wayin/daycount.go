package wayin

import (
	"errors"
	"fmt"
	"os"
	"time"

	"lnk.dev/lnk/internal/ownerfile"
)

// DayFile counts, in the agent's settings folder, the messages from its
// schedules and subagents taken on one day (UTC), for [tool.scheduler]
// per_day: {"day": "YYYY-MM-DD", "taken": N}.
const DayFile = "wayin-day.json"

type dayCount struct {
	Day   string `json:"day"`
	Taken int    `json:"taken"`
}

// ParseDayCount reads wayin-day.json strictly.
func ParseDayCount(b []byte) (dayCount, error) {
	var d dayCount
	if err := decodeStrict(b, &d); err != nil {
		return dayCount{}, fmt.Errorf("%s: %w", DayFile, err)
	}
	if _, err := time.Parse(time.DateOnly, d.Day); err != nil || d.Taken < 0 {
		return dayCount{}, fmt.Errorf("%s: day %q or count %d is not one", DayFile, d.Day, d.Taken)
	}
	return d, nil
}

// takenToday is today's count (0 on a new day or none yet); one that
// can't be read refuses, never counts as none.
func takenToday(dirfd int, now time.Time) (dayCount, error) {
	today := dayCount{Day: now.UTC().Format(time.DateOnly)}
	b, err := ownerfile.ReadFile(dirfd, DayFile, ownerfile.Private, 4096)
	if errors.Is(err, os.ErrNotExist) {
		return today, nil
	}
	if err != nil {
		return dayCount{}, err
	}
	d, err := ParseDayCount(b)
	if err != nil {
		return dayCount{}, err
	}
	if d.Day != today.Day {
		return today, nil
	}
	return d, nil
}

func writeDay(dirfd int, d dayCount) error {
	b := fmt.Appendf(nil, "{\"day\": %q, \"taken\": %d}\n", d.Day, d.Taken)
	return ownerfile.WriteAtomic(dirfd, DayFile, b, ownerfile.Write{Mode: 0o600})
}
