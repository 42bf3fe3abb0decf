package daycount

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var starts = File{Name: "starts.json", Key: "starts"}

func dir(t *testing.T) (string, int) {
	d := t.TempDir()
	fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return d, fd
}

// TestTodayWriteReadBack: a count written is read back today, a new day
// starts at 0, and the file is 0600.
func TestTodayWriteReadBack(t *testing.T) {
	d, fd := dir(t)
	now := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	if c, err := starts.Today(fd, now); err != nil || c != (Count{"2026-12-07", 0}) {
		t.Fatalf("none yet: %+v %v", c, err)
	}
	if err := starts.Write(fd, Count{"2026-12-07", 5}); err != nil {
		t.Fatal(err)
	}
	if c, err := starts.Today(fd, now); err != nil || c.N != 5 {
		t.Fatalf("read back: %+v %v", c, err)
	}
	if c, err := starts.Today(fd, now.Add(2*time.Hour)); err != nil || c != (Count{"2026-12-08", 0}) {
		t.Fatalf("the next day: %+v %v", c, err)
	}
	if fi, _ := os.Stat(filepath.Join(d, "starts.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

// TestUnreadableCountRefuses: a count that can't be read (malformed, the
// other key, negative, a link) refuses, never counts as none; the
// well-formed one beside them is read (the positive control).
func TestUnreadableCountRefuses(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, body := range []string{`{"day": "2026-12-07", "starts": -1}`, `{"day": "2026-12-07", "taken": 1}`, `{"day": "2026-12-07", "starts": 1, "starts": 0}`,
		`{"day": "07-12-2026", "starts": 1}`, `{"day": "2026-12-07", "starts": 1.5}`, `{"day": "2026-12-07"}`, `garbage`} {
		d, fd := dir(t)
		os.WriteFile(filepath.Join(d, "starts.json"), []byte(body), 0o600)
		if c, err := starts.Today(fd, now); err == nil {
			t.Errorf("%s read as %+v", body, c)
		}
	}
	d, fd := dir(t)
	os.WriteFile(filepath.Join(d, "elsewhere.json"), []byte(`{"day": "2026-12-07", "starts": 0}`), 0o600)
	os.Symlink("elsewhere.json", filepath.Join(d, "starts.json"))
	if _, err := starts.Today(fd, now); err == nil {
		t.Error("a count behind a link was read")
	}
	os.Remove(filepath.Join(d, "starts.json"))
	os.WriteFile(filepath.Join(d, "starts.json"), []byte(`{"day": "2026-12-07", "starts": 3}`), 0o600)
	if c, err := starts.Today(fd, now); err != nil || c.N != 3 {
		t.Fatalf("the control: %+v %v", c, err)
	}
}

// FuzzParse: what parses is a real day and a count not below 0, and
// writing it reads back the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"day": "2026-12-07", "starts": 3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := starts.Parse(b)
		if err != nil {
			return
		}
		if _, err := time.Parse(time.DateOnly, c.Day); err != nil || c.N < 0 {
			t.Fatalf("%q read as %+v", b, c)
		}
	})
}
