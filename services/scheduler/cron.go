package scheduler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron is a recurring job's times: five fields, minute hour day-of-month
// month day-of-week, each "*", a number, a range A-B, a step */S or A-B/S,
// or a list of those separated by commas. Day-of-week 0 and 7 are
// Sunday. As in cron, when both day fields are restricted a day matching
// either fires.
type Cron struct {
	min, hour, dom, month, dow uint64
	domAny, dowAny             bool
}

var cronFields = []struct {
	name   string
	lo, hi int
}{{"minute", 0, 59}, {"hour", 0, 23}, {"day of month", 1, 31}, {"month", 1, 12}, {"day of week", 0, 7}}

// maxCron bounds a cron line as written.
const maxCron = 256

// ParseCron reads a five-field cron line.
func ParseCron(s string) (*Cron, error) {
	if len(s) > maxCron {
		return nil, errors.New("a cron line is at most 256 bytes")
	}
	f := strings.Fields(s)
	if len(f) != 5 {
		return nil, fmt.Errorf("a cron line has five fields (minute hour day month weekday), not %d", len(f))
	}
	var sets [5]uint64
	for i, field := range f {
		set, err := parseField(field, cronFields[i].lo, cronFields[i].hi)
		if err != nil {
			return nil, fmt.Errorf("cron's %s %q: %w", cronFields[i].name, field, err)
		}
		sets[i] = set
	}
	c := &Cron{min: sets[0], hour: sets[1], dom: sets[2], month: sets[3], dow: sets[4], domAny: f[2] == "*", dowAny: f[4] == "*"}
	if c.dow&(1<<7) != 0 {
		c.dow |= 1
	}
	return c, nil
}

func parseField(field string, lo, hi int) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(field, ",") {
		rng, stepS, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepS)
			if err != nil || n < 1 || n > hi-lo+1 {
				return 0, errors.New("a step is a number from 1 to the field's span")
			}
			step = n
		}
		a, b := lo, hi
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			as, bs, _ := strings.Cut(rng, "-")
			var err1, err2 error
			a, err1 = strconv.Atoi(as)
			b, err2 = strconv.Atoi(bs)
			if err1 != nil || err2 != nil || a > b {
				return 0, errors.New("a range is A-B with A at most B")
			}
		default:
			n, err := strconv.Atoi(rng)
			if err != nil {
				return 0, errors.New("not a number, a range, a step or *")
			}
			a, b = n, n
			if hasStep {
				b = hi
			}
		}
		if a < lo || b > hi {
			return 0, fmt.Errorf("out of %d-%d", lo, hi)
		}
		for v := a; v <= b; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

func (c *Cron) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<uint(t.Day())) != 0
	dow := c.dow&(1<<uint(t.Weekday())) != 0
	switch {
	case c.domAny && c.dowAny:
		return true
	case c.domAny:
		return dow
	case c.dowAny:
		return dom
	}
	return dom || dow
}

// Next is the first minute strictly after after, in loc, that c names;
// false when none comes within five years (31 February).
func (c *Cron) Next(after time.Time, loc *time.Location) (time.Time, bool) {
	t := after.In(loc).Truncate(time.Minute).Add(time.Minute)
	end := t.AddDate(5, 0, 0)
	for t.Before(end) {
		if c.month&(1<<uint(t.Month())) == 0 || !c.dayMatches(t) {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
			continue
		}
		if c.hour&(1<<uint(t.Hour())) == 0 {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, loc)
			continue
		}
		if c.min&(1<<uint(t.Minute())) == 0 {
			t = t.Add(time.Minute)
			continue
		}
		return t, true
	}
	return time.Time{}, false
}
