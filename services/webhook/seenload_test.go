package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loadStrict is the record's reading as it was before the fast reader:
// encoding/json for hooks-seen.json whole, a decoder for each line of
// the log, the kept entries made again from the map. missing: no
// hooks-seen.json. One change: a record that is null is refused (the
// reader before took it as a nil map, and the listener then failed at
// its log's first line or at its first post taken).
func loadStrict(record []byte, missing bool, log []byte) (*seen, error) {
	s := &seen{taken: map[string]time.Time{}}
	if !missing {
		var taken map[string]time.Time
		if err := json.Unmarshal(record, &taken); err != nil {
			return nil, err
		}
		if taken == nil {
			return nil, errNotARecord
		}
		s.taken = taken
	}
	if err := parseSeenLogStrict(log, s.taken); err != nil {
		return nil, err
	}
	if err := s.rebuild(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseSeenLogStrict is the log's reader as it was before the fast one.
func parseSeenLogStrict(data []byte, taken map[string]time.Time) error {
	for n := 1; ; n++ {
		line, rest, ok := bytes.Cut(data, []byte{'\n'})
		if !ok {
			return nil
		}
		data = rest
		var m map[string]time.Time
		d := json.NewDecoder(io.MultiReader(bytes.NewReader([]byte{'{'}), bytes.NewReader(line), bytes.NewReader([]byte{'}'})))
		if err := d.Decode(&m); err != nil || d.More() || len(m) != 1 {
			return fmt.Errorf("%s: line %d is not an id and the time it was taken", SeenLogName, n)
		}
		for k, at := range m {
			if was, ok := taken[k]; !ok || at.After(was) {
				taken[k] = at
			}
		}
	}
}

// loadFast is the record's reading as openSeen does it now.
func loadFast(record []byte, missing bool, log []byte) (*seen, error) {
	s := emptySeen()
	if !missing {
		if err := s.loadRecord(string(record)); err != nil {
			return nil, err
		}
	}
	if err := s.merge(log); err != nil {
		return nil, err
	}
	return s, nil
}

// sameRecord says how a and b differ: their ids and times, each
// entry's JSON (which names its time's zone), the bytes counted, and
// the order taken (entries of one time in any order).
func sameRecord(a, b *seen) error {
	if len(a.taken) != len(b.taken) || len(a.kept) != len(b.kept) || a.bytes != b.bytes {
		return fmt.Errorf("%d ids, %d kept, %d bytes; against %d, %d, %d", len(a.taken), len(a.kept), a.bytes, len(b.taken), len(b.kept), b.bytes)
	}
	for k, at := range a.taken {
		if bt, ok := b.taken[k]; !ok || !bt.Equal(at) {
			return fmt.Errorf("%q: %v against %v (%v)", k, at, bt, ok)
		}
	}
	order := func(k []keptID) ([]string, bool) {
		out := []string{}
		for i, e := range k {
			if i > 0 && e.at.Before(k[i-1].at) {
				return nil, false
			}
			out = append(out, e.at.UTC().Format(time.RFC3339Nano)+" "+e.json)
		}
		slices.Sort(out)
		return out, true
	}
	ka, oka := order(a.kept)
	kb, okb := order(b.kept)
	if !oka || !okb || !slices.Equal(ka, kb) {
		return fmt.Errorf("kept:\n%q\nagainst\n%q", ka, kb)
	}
	for _, e := range a.kept {
		if !a.taken[e.key].Equal(e.at) {
			return fmt.Errorf("kept %q at %v, taken at %v", e.key, e.at, a.taken[e.key])
		}
	}
	return nil
}

// FuzzSeenLoadIsStrict: the fast reader of the record (hooks-seen.json
// and the lines of hooks-seen.log) takes exactly what the strict one
// (encoding/json, the reader before it) takes, refuses what it refuses,
// and reads the same ids, times and entries. Its seeds are the text the
// listener writes and the ways it could be written otherwise: spaces,
// escapes, a key twice, times in other forms or out of range, null,
// lines the strict reader alone takes.
func FuzzSeenLoadIsStrict(f *testing.F) {
	h := "0123456789abcdef0123456789abcdef "
	f.Add([]byte(`{"`+h+`a":"2026-12-07T15:00:00Z","`+h+`b":"2026-12-07T15:00:00Z"}`), false, []byte(`"`+h+`c":"2026-12-07T15:00:01Z"`+"\n"))
	f.Add([]byte(`{}`), false, []byte(`"`+h+`a":"2026-12-07T15:00:01Z"`+"\n"+`"`+h+`a":"2026-12-07T15:00:00Z"`+"\n"+`"x":"20`))
	f.Add([]byte(nil), true, []byte(`"a":"2026-12-07T15:00:00Z"`+"\n"))
	f.Fuzz(func(t *testing.T, record []byte, missing bool, log []byte) {
		strict, serr := loadStrict(record, missing, log)
		fast, ferr := loadFast(record, missing, log)
		if (serr == nil) != (ferr == nil) {
			t.Fatalf("the strict reader: %v; the fast one: %v", serr, ferr)
		}
		if serr != nil {
			return
		}
		if err := sameRecord(fast, strict); err != nil {
			t.Fatalf("the fast reader read another record: %v", err)
		}
	})
}

// TestSeenFastReaderTakesWhatTheListenerWrites: a record the listener
// wrote, and a log it appended, are read by the fast reader itself (not
// handed to the strict one), and read as the strict one reads them.
func TestSeenFastReaderTakesWhatTheListenerWrites(t *testing.T) {
	record, log := fullRecord(t, 1<<20)
	taken, kept, n, ok := scanRecord(string(record))
	if !ok || len(taken) != len(kept) || n != int64(len(record))+1 {
		t.Fatalf("the listener's own record is not read by the fast reader: %v, %d ids, %d entries, %d bytes of %d", ok, len(taken), len(kept), n, len(record))
	}
	if err := scanSeenLog(log, func(e keptID) {
		if _, rest, ok := entryAt(e.json, &timeCache{}); !ok || rest != "" {
			t.Fatalf("a line of the listener's log not read as written: %q", e.json)
		}
	}); err != nil {
		t.Fatal(err)
	}
	strict, err := loadStrict(record, false, log)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := loadFast(record, false, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameRecord(fast, strict); err != nil {
		t.Fatal(err)
	}
	// The positive control of the fallback: a space the listener never
	// writes sends the record to the strict reader, which takes it.
	spaced := append([]byte("{ "), record[1:]...)
	if _, _, _, ok := scanRecord(string(spaced)); ok {
		t.Fatal("the fast reader took a record the listener does not write")
	}
	if s, err := loadFast(spaced, false, nil); err != nil || len(s.taken) != len(taken) {
		t.Fatalf("a record with a space: %v", err)
	}
}

// fullRecord is a record as the listener writes it, of about size bytes
// (at most), and a log of a few lines: ids as GitHub's deliveries (a
// UUID), one taken every few seconds over the last 29 days, each at a
// time of its own.
func fullRecord(t testing.TB, size int) (record, log []byte) {
	t.Helper()
	hook := "0123456789abcdef0123456789abcdef"
	start := time.Now().UTC().Truncate(time.Second).Add(-29 * 24 * time.Hour)
	var b bytes.Buffer
	b.Grow(size)
	b.WriteByte('{')
	for i := 0; ; i++ {
		e, err := newKept(fmt.Sprintf("%s %08x-%04x-4%03x-8%03x-%012x", hook, i, i%65536, i%4096, (i*7)%4096, i*2654435761%(1<<48)), start.Add(time.Duration(i)*3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if b.Len()+len(e.json)+2 > size {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.json)
	}
	b.WriteByte('}')
	var l bytes.Buffer
	for i := range 3 {
		e, _ := newKept(fmt.Sprintf("%s log-%d", hook, i), time.Now().UTC().Truncate(time.Second))
		l.WriteString(e.json + "\n")
	}
	return b.Bytes(), l.Bytes()
}

// cpuNow is the process's CPU time so far (user and system).
func cpuNow() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSeenLoad64MiB measures reading a full record, 64 MiB of ids
// as the listener writes them (each at a time of its own), into the
// listener's record, beside, in the same run and in interleaved turns
// (the order turned each time): the reader before (loadStrict:
// encoding/json into the map, the entries made again), and
// encoding/json decoding the same text into a plain map[string]string
// (the floor of a generic JSON reader). start is openSeen on the file
// (its lock, the read, the fold, the folder's fsync). Each figure is the
// median of the turns, with its range; x-old and x-baseline are the
// fast reader's time over the old reader's and over the plain map's,
// turn by turn; cpu figures are the process's CPU time (the garbage
// collector's included).
func BenchmarkSeenLoad64MiB(b *testing.B) {
	record, _ := fullRecord(b, maxSeenFile)
	dir := b.TempDir()
	if err := os.WriteFile(dir+"/"+SeenName, record, 0o600); err != nil {
		b.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	text := string(record)
	var ids int
	loaders := []struct {
		name string
		load func() error
	}{
		{"fast", func() error {
			// The text as readRecord reads it: a string of its own.
			s := emptySeen()
			err := s.loadRecord(text)
			if err == nil {
				err = s.merge(nil)
			}
			ids = len(s.taken)
			return err
		}},
		{"old", func() error { _, err := loadStrict(record, false, nil); return err }},
		{"json-map", func() error { var m map[string]string; return json.Unmarshal(record, &m) }},
		{"start", func() error {
			s, err := openSeen(d, 0)
			if err == nil {
				s.close()
			}
			return err
		}},
	}
	const turns = 5
	wall := map[string][]float64{}
	cpu := map[string][]float64{}
	var xOld, xBase []float64
	b.ResetTimer()
	for range b.N {
		for turn := range turns {
			took := map[string]float64{}
			for i := range loaders {
				l := loaders[(i+turn)%len(loaders)]
				runtime.GC()
				w0, c0 := time.Now(), cpuNow()
				if err := l.load(); err != nil {
					b.Fatalf("%s: %v", l.name, err)
				}
				w, c := time.Since(w0), cpuNow()-c0
				took[l.name] = float64(w.Nanoseconds())
				wall[l.name] = append(wall[l.name], float64(w.Nanoseconds())/1e6)
				cpu[l.name] = append(cpu[l.name], float64(c.Nanoseconds())/1e6)
			}
			xOld = append(xOld, took["fast"]/took["old"])
			xBase = append(xBase, took["fast"]/took["json-map"])
		}
	}
	b.StopTimer()
	report := func(xs []float64, unit string) {
		slices.Sort(xs)
		b.ReportMetric(xs[len(xs)/2], unit)
		b.ReportMetric(xs[0], unit+"-min")
		b.ReportMetric(xs[len(xs)-1], unit+"-max")
	}
	for _, l := range loaders {
		report(wall[l.name], l.name+"-ms")
		report(cpu[l.name], l.name+"-cpu-ms")
	}
	report(xOld, "x-old")
	report(xBase, "x-baseline")
	b.ReportMetric(float64(ids), "ids")
	b.ReportMetric(float64(len(record))/(1<<20), "MiB")
	if !strings.HasSuffix(string(record), "}") {
		b.Fatal("the record is not whole")
	}
}

// TestSeenNullRecordRefused: a hooks-seen.json that is null (never
// written by the listener) refuses the start with a reason naming the
// file, where the reader before took it for no map and then failed at
// the log's first line; an empty object with the same log is the
// positive control.
func TestSeenNullRecordRefused(t *testing.T) {
	a := testAgent(t)
	dir, err := a.dir()
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	record, log := seenPaths(a)
	line := []byte(`"h a":"2026-12-07T15:00:00Z"` + "\n")
	for _, c := range []struct {
		record string
		ok     bool
	}{{"null", false}, {"{}", true}} {
		if err := os.WriteFile(record, []byte(c.record), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, line, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := openSeen(dir, 0)
		if c.ok {
			if err != nil || s.begin("h a", time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)) != ErrRepeat {
				t.Fatalf("%s: %v", c.record, err)
			}
			s.close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), SeenName+": null") {
			t.Fatalf("a record of %s: %v", c.record, err)
		}
	}
}
