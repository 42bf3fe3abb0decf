package scheduler

import (
	"strings"
	"testing"
	"time"
)

// TestCronNext: each form of a field, the day fields' either-or, Sunday
// as 7, and a line naming no time.
func TestCronNext(t *testing.T) {
	zone, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		zone = time.FixedZone("CET", 3600)
	}
	from := time.Date(2026, 12, 7, 10, 30, 0, 0, zone) // a Monday
	for _, c := range []struct{ cron, want string }{
		{"* * * * *", "2026-12-07 10:31"},
		{"0 9 * * *", "2026-12-08 09:00"},
		{"*/15 * * * *", "2026-12-07 10:45"},
		{"0 8-10/2 * * *", "2026-12-08 08:00"},
		{"30 10 * * 1", "2026-12-14 10:30"},
		{"0 0 * * 7", "2026-12-13 00:00"},
		{"0 0 1 * *", "2027-01-01 00:00"},
		{"0 12 25 12 *", "2026-12-25 12:00"},
		{"0 12 1 * 3", "2026-12-09 12:00"}, // Wednesday, or the 1st
		{"5,10 11 * * *", "2026-12-07 11:05"},
	} {
		cr, err := ParseCron(c.cron)
		if err != nil {
			t.Fatalf("%s: %v", c.cron, err)
		}
		got, ok := cr.Next(from, zone)
		if !ok || got.Format("2006-01-02 15:04") != c.want || got.Location() != zone {
			t.Errorf("%s: %v %v, want %s", c.cron, got, ok, c.want)
		}
	}
	cr, _ := ParseCron("0 0 31 2 *")
	if _, ok := cr.Next(from, zone); ok {
		t.Error("31 February came")
	}
	for _, bad := range []string{"", "* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "a * * * *", "* * * * * *", strings.Repeat("1,", 200) + "1 * * * *"} {
		if _, err := ParseCron(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}
