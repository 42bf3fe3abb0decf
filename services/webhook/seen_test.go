package webhook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seenPaths are the record's two files in agent a's settings folder.
func seenPaths(a Agent) (record, log string) {
	dir := filepath.Join(a.Home, ".lnk", "agents", a.ID)
	return filepath.Join(dir, SeenName), filepath.Join(dir, SeenLogName)
}

// onDisk is what the record's two files hold, read by path.
func onDisk(t testing.TB, a Agent) string {
	t.Helper()
	record, log := seenPaths(a)
	r, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	l, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(r) + "\n" + string(l)
}

// TestSeenNotWrittenIsNot202: a taken post whose id can't be made
// durable (a link put at hooks-seen.log while the listener holds it, or
// at hooks-seen.json, neither ever written through) is not answered 202,
// and its repeat is still refused 401; once the link is gone the next
// post writes the record whole, every id in it, and a listener started
// afresh refuses their replays.
func TestSeenNotWrittenIsNot202(t *testing.T) {
	r := newRig(t, testLimits())
	p := "/h/" + r.hook.ID
	post := func(id string) int { return r.post(t, p, id, time.Now(), "text/plain", []byte("hi"), r.secret) }
	want(t, "the positive control", post("m0"), 202)
	record, log := seenPaths(r.a)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(elsewhere, []byte("{}"), 0o600)
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, log); err != nil {
		t.Fatal(err)
	}
	want(t, "taken, the log replaced by a link", post("m1"), 500)
	want(t, "its repeat", post("m1"), 401)
	want(t, "taken, the log still a link", post("m2"), 500)
	if b, _ := os.ReadFile(elsewhere); string(b) != "{}" {
		t.Fatalf("written through the link: %s", b)
	}
	os.Remove(log)
	os.Remove(record)
	if err := os.Symlink(elsewhere, record); err != nil {
		t.Fatal(err)
	}
	want(t, "taken, the record a link", post("m3"), 500)
	if b, _ := os.ReadFile(elsewhere); string(b) != "{}" {
		t.Fatalf("written through the link: %s", b)
	}
	os.Remove(record)
	want(t, "taken, the links gone", post("m4"), 202)
	got := onDisk(t, r.a)
	for _, id := range []string{"m0", "m1", "m2", "m3", "m4"} {
		if !strings.Contains(got, r.hook.ID+" "+id+`"`) {
			t.Fatalf("%s is not on disk:\n%s", id, got)
		}
	}
	again := r.listen(t, r.checker, r.h, testLimits(), nil)
	for _, id := range []string{"m0", "m1", "m2", "m3", "m4"} {
		want(t, "a replay of "+id+" after a restart", post(id), 401)
	}
	want(t, "a new post after a restart", post("m5"), 202)
	stopServing(again)
	os.Remove(record)
	if err := os.Symlink(elsewhere, record); err != nil {
		t.Fatal(err)
	}
	if _, err := NewListener(r.a, r.checker, r.h, testLimits(), nil); err == nil || !strings.Contains(err.Error(), SeenName) {
		t.Fatalf("a listener started on a link at %s: %v", SeenName, err)
	}
}

// TestSeenKeeps30Days: a taken post's id is refused for 30 days and then
// forgotten, in memory and in the record written whole.
func TestSeenKeeps30Days(t *testing.T) {
	a := testAgent(t)
	dir, err := a.dir()
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	s, err := openSeen(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old, recent := now.Add(-KeepSeen-time.Minute), now.Add(-KeepSeen+time.Hour)
	for key, at := range map[string]time.Time{"h old": old, "h recent": recent} {
		if err := s.begin(key, at); err != nil {
			t.Fatal(err)
		}
		if err := s.take(key, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.begin("h recent", now); err != ErrRepeat {
		t.Fatalf("an id taken 29 days ago: %v, want a repeat", err)
	}
	if err := s.begin("h old", now); err != nil {
		t.Fatalf("an id taken 30 days ago: %v, want it taken again", err)
	}
	s.drop("h old")
	s.close()
	again, err := openSeen(dir, 0) // the record written whole: the old id pruned
	if err != nil {
		t.Fatal(err)
	}
	defer again.close()
	record, _ := seenPaths(a)
	b, _ := os.ReadFile(record)
	if strings.Contains(string(b), "h old") || !strings.Contains(string(b), "h recent") {
		t.Fatalf("%s after 30 days:\n%s", SeenName, b)
	}
	if again.begin("h recent", now) != ErrRepeat || again.begin("h old", now) != nil {
		t.Fatal("not read back")
	}
}

// TestSeenLogFolded: the ids appended to hooks-seen.log are read back by
// the next listener (a last line a crash cut short left out: its post
// was never answered), folded into hooks-seen.json written whole, the
// log emptied; a log line that is not an id refuses the start.
func TestSeenLogFolded(t *testing.T) {
	a := testAgent(t)
	dir, err := a.dir()
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	s, err := openSeen(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, k := range []string{"h a", "h b"} {
		if err := s.begin(k, now); err != nil {
			t.Fatal(err)
		}
		if err := s.take(k, now); err != nil {
			t.Fatal(err)
		}
	}
	s.close()
	record, log := seenPaths(a)
	if b, _ := os.ReadFile(record); string(b) != "{}" {
		t.Fatalf("the record was written whole for two ids: %s", b)
	}
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`"h cut":"20`)
	f.Close()
	again, err := openSeen(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	again.close()
	var m map[string]time.Time
	b, _ := os.ReadFile(record)
	if err := json.Unmarshal(b, &m); err != nil || len(m) != 2 || m["h a"].IsZero() || m["h b"].IsZero() {
		t.Fatalf("%s folded: %s %v", SeenName, b, err)
	}
	if st, err := os.Stat(log); err != nil || st.Size() != 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s after the fold: %v %v", SeenLogName, st, err)
	}
	os.WriteFile(log, []byte("\"h c\":\"2026-12-07T00:00:00Z\"\nnot an id\n"), 0o600)
	if _, err := openSeen(dir, 0); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a log with a line that is not an id: %v", err)
	}
}

// TestSeenFullRefused: past Limits.MaxSeen a new post is refused 503
// before it reaches the harness, its reason and a hint logged, while
// the posts before it were taken 202 (the positive control) and a repeat
// of one still 401; the listener starts again on the record at its
// limit, refusing the same; and once the oldest ids pass 30 days new
// posts are taken again. No file of the record ever passes the limit.
func TestSeenFullRefused(t *testing.T) {
	e, err := newKept(strings.Repeat("0", 32)+" full-0", time.Now().UTC().Truncate(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	lim := testLimits()
	lim.MaxSeen = 2 + 3*e.cost() // three ids of this length
	r := newRig(t, lim)
	p := "/h/" + r.hook.ID
	post := func(id string) int { return r.post(t, p, id, time.Now(), "text/plain", []byte("hi"), r.secret) }
	for _, id := range []string{"full-1", "full-2", "full-3"} {
		want(t, id, post(id), 202)
	}
	want(t, "past the limit", post("full-4"), 503)
	want(t, "a repeat at the limit", post("full-1"), 401)
	if n := r.h.count(); n != 3 {
		t.Fatalf("%d posts reached the harness, want 3", n)
	}
	logged := r.log.String()
	if strings.Count(logged, "refused 503: "+SeenName+" holds as many ids as it may") != 1 || !strings.Contains(logged, "hint: lnk agent webhook list "+r.a.Name) {
		t.Fatalf("the refusal was not logged once with its hint:\n%s", logged)
	}
	record, log := seenPaths(r.a)
	within := func() {
		t.Helper()
		for _, f := range []string{record, log} {
			if st, err := os.Stat(f); err != nil || st.Size() > lim.MaxSeen {
				t.Fatalf("%s: %v, past the limit of %d: %v", f, st.Size(), lim.MaxSeen, err)
			}
		}
	}
	within()

	stopServing(r.cur)
	again, err := NewListener(r.a, r.checker, r.h, lim, nil)
	if err != nil {
		t.Fatalf("the listener did not start again on a full record: %v", err)
	}
	r.cur, r.base = again, serve(t, again)
	within()
	want(t, "a repeat after the restart", post("full-2"), 401)
	want(t, "past the limit after the restart", post("full-5"), 503)

	// 30 days on, the three ids are pruned: room again.
	stopServing(r.cur)
	later, err := NewListener(r.a, r.checker, r.h, lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	later.now = func() time.Time { return time.Now().Add(KeepSeen + time.Hour) }
	r.cur, r.base = later, serve(t, later)
	want(t, "30 days on", post("full-6"), 202)
	want(t, "its repeat", post("full-6"), 401)
	if n := r.h.count(); n != 4 {
		t.Fatalf("%d posts reached the harness, want 4", n)
	}
	within()
}

// TestSeenStartsAtTheMost: a hooks-seen.json of 64 MiB, the most the
// default limit lets the record grow to, is read when the listener
// starts: its ids are refused 401 as repeats, a new post 503 (the
// record is full), never a listener that cannot start.
func TestSeenStartsAtTheMost(t *testing.T) {
	r := newRig(t, testLimits())
	record, _ := seenPaths(r.a)
	at, _ := json.Marshal(time.Now().UTC().Truncate(time.Second))
	// Entries of ids of up to 256 bytes, as many as fit, the last one's
	// id of the length that leaves no room for another.
	var b bytes.Buffer
	b.WriteByte('{')
	size := int64(2) // the record's count: 2 + Σ (entry + 1)
	entry := func(id string) string { return `"` + r.hook.ID + " " + id + `":` + string(at) }
	for i := 0; ; i++ {
		id := "big-" + itoa(i) + strings.Repeat("p", 200)
		if left := maxSeenFile - size; int64(len(entry(id))+1) > left {
			pad := left - int64(len(entry("last-")))
			if pad > 0 && pad < 250 {
				id = "last-" + strings.Repeat("p", int(pad-1))
			} else {
				t.Fatalf("%d bytes left", left)
			}
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(entry(id))
		size += int64(len(entry(id)) + 1)
		if size >= maxSeenFile {
			break
		}
	}
	b.WriteByte('}')
	if b.Len() > maxSeenFile || size != maxSeenFile {
		t.Fatalf("a record of %d bytes, counted %d", b.Len(), size)
	}
	if err := os.WriteFile(record, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	stopServing(r.cur)
	l, err := NewListener(r.a, r.checker, r.h, testLimits(), nil)
	if err != nil {
		t.Fatalf("a listener did not start on a record of %d bytes: %v", b.Len(), err)
	}
	r.cur, r.base = l, serve(t, l)
	want(t, "a repeat of an id in the record", r.post(t, "/h/"+r.hook.ID, "big-7"+strings.Repeat("p", 200), time.Now(), "text/plain", []byte("hi"), r.secret), 401)
	want(t, "a new post, the record full", r.post(t, "/h/"+r.hook.ID, "new", time.Now(), "text/plain", []byte("hi"), r.secret), 503)
}
