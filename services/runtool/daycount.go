package runtool

import (
	"errors"
	"fmt"
	"os"
	"time"

	"lnk.dev/lnk/internal/ownerfile"
)

// dayCount is starts.json: how many background commands started on one
// day (UTC), for [tool.run] background_per_day.
type dayCount struct {
	Day    string `json:"day"`
	Starts int    `json:"starts"`
}

const dayFile = "starts.json"

// ParseDayCount reads starts.json strictly.
func ParseDayCount(b []byte) (dayCount, error) {
	var d dayCount
	if err := decodeStrict(b, &d); err != nil {
		return dayCount{}, fmt.Errorf("%s: %w", dayFile, err)
	}
	if _, err := time.Parse(time.DateOnly, d.Day); err != nil || d.Starts < 0 {
		return dayCount{}, fmt.Errorf("%s: day %q or count %d is not one", dayFile, d.Day, d.Starts)
	}
	return d, nil
}

// startsToday reads today's count (0 on a new day or a first start). An
// unreadable count refuses.
func (s *store) startsToday(now time.Time) (dayCount, error) {
	today := dayCount{Day: now.UTC().Format(time.DateOnly)}
	b, err := ownerfile.ReadFile(s.fd(), dayFile, ownerfile.Private, 4096)
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

func (s *store) writeDay(d dayCount) error {
	b := fmt.Appendf(nil, "{\"day\": %q, \"starts\": %d}\n", d.Day, d.Starts)
	return ownerfile.WriteAtomic(s.fd(), dayFile, b, ownerfile.Write{Mode: 0o600})
}
