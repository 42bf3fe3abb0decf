package runtool

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/testenv"
)

var startedID = regexp.MustCompile(`started background command ([0-9a-f]{16})`)

func mark() string { return fmt.Sprintf("%d.%d", 2000+rand.IntN(1000), rand.IntN(1_000_000)) }

// bgDir is the agent's background folder outside its Home.
func bgDir(a *Agent) string { return filepath.Join(a.Home, ".lnk", "agents", a.ID, "background") }

func readRecord(t *testing.T, a *Agent, id string) *Record {
	t.Helper()
	p := filepath.Join(bgDir(a), id+".json")
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v %v", p, fi, err)
	}
	b, _ := os.ReadFile(p)
	r, err := ParseRecord(b)
	if err != nil {
		t.Fatalf("%s: %v\n%s", p, err, b)
	}
	return r
}

func startBg(t *testing.T, cs interface{}, thread string, argv ...string) string {
	t.Helper()
	text, isErr := call(t, cs.(clientSession), thread, "start", map[string]any{"argv": argv})
	m := startedID.FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("start %v: %v %q", argv, isErr, text)
	}
	return m[1]
}

// TestBackgroundIsItsConversations: a command started in conversation
// t1 is listed, read and stopped from t1; t2 and a call naming no
// conversation see none of it, read nothing and stop nothing. Its output
// lands in Home/background/<id>.out, its record (0600) outside Home
// names its group, and its ending is recorded once, from run:<id>.
func TestBackgroundIsItsConversations(t *testing.T) {
	a := testAgent(t, "")
	cs := connect(t, a)
	m := mark()
	id := startBg(t, cs, "t1", "sh", "-c", "echo started; sleep "+m)
	if !waitFor(10*time.Second, func() bool { return len(processesWith("sleep", m)) == 1 }) {
		t.Fatal("the background command is not running")
	}
	if text, _ := call(t, cs, "t1", "list", nil); !strings.Contains(text, id+" running") {
		t.Fatalf("t1's list: %q", text)
	}
	for _, other := range []string{"t2", ""} {
		if text, isErr := call(t, cs, other, "list", nil); isErr || strings.Contains(text, id) {
			t.Fatalf("list from %q: %v %q", other, isErr, text)
		}
		if text, isErr := call(t, cs, other, "read", map[string]any{"id": id}); !isErr || strings.Contains(text, "started") {
			t.Fatalf("read from %q: %v %q", other, isErr, text)
		}
		if text, isErr := call(t, cs, other, "stop", map[string]any{"id": id}); !isErr || !strings.Contains(text, ErrNoSuch.Error()) {
			t.Fatalf("stop from %q: %v %q", other, isErr, text)
		}
	}
	if len(processesWith("sleep", m)) != 1 {
		t.Fatal("another conversation's stop stopped it")
	}
	if !waitFor(5*time.Second, func() bool {
		text, _ := call(t, cs, "t1", "read", map[string]any{"id": id})
		return strings.HasPrefix(text, "started\n")
	}) {
		t.Fatal("t1 never read its output")
	}
	r := readRecord(t, a, id)
	if r.State != StateRunning || r.Thread != "t1" || r.Group.PID <= 1 {
		t.Fatalf("record: %+v", r)
	}
	if pg, err := procstat.Read(r.Group.PID); err != nil || pg.PGID != r.Group.PID || pg.Start != r.Group.Start {
		t.Fatalf("the record's group %+v is not the running one: %+v %v", r.Group, pg, err)
	}
	if text, isErr := call(t, cs, "t1", "stop", map[string]any{"id": id}); isErr || !strings.Contains(text, "ended") || !strings.Contains(text, EndStopped) {
		t.Fatalf("stop: %v %q", isErr, text)
	}
	if !waitFor(2*time.Second, func() bool { return len(processesWith("sleep", m)) == 0 }) {
		t.Fatal("stopped, but still running")
	}
	if r := readRecord(t, a, id); r.State != StateEnded || r.Reason != EndStopped {
		t.Fatalf("record after stop: %+v", r)
	}
	out, err := os.ReadFile(filepath.Join(a.FilesDir(), "background", id+".out"))
	if err != nil || string(out) != "started\n" {
		t.Fatalf("output: %q %v", out, err)
	}
	var e Ending
	b, err := os.ReadFile(filepath.Join(bgDir(a), id+".ending.json"))
	if err != nil || json.Unmarshal(b, &e) != nil || e.From != "run:"+id || e.Thread != "t1" || e.Reason != EndStopped {
		t.Fatalf("ending: %s %v", b, err)
	}
	if text, isErr := call(t, cs, "", "start", map[string]any{"argv": []string{"true"}}); !isErr || !strings.Contains(text, "names no conversation") {
		t.Fatalf("a start naming no conversation: %v %q", isErr, text)
	}
}

// TestBackgroundLimits: a fifth command at once is refused with the
// reason; once one is stopped, a start works again. Past
// background_per_day, a start is refused though none runs.
func TestBackgroundLimits(t *testing.T) {
	a := testAgent(t, "[tool.run]\nbackground_per_day = 6\n")
	cs := connect(t, a)
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, startBg(t, cs, "t", "sleep", mark()))
	}
	text, isErr := call(t, cs, "t", "start", map[string]any{"argv": []string{"sleep", mark()}})
	if !isErr || !strings.Contains(text, "4 background commands run already, the most at once ([tool.run] background = 4)") || !strings.Contains(text, "hint: ") {
		t.Fatalf("a fifth: %v %q", isErr, text)
	}
	if _, isErr := call(t, cs, "t", "stop", map[string]any{"id": ids[0]}); isErr {
		t.Fatal("stop")
	}
	ids[0] = startBg(t, cs, "t", "sleep", mark()) // the control: room again
	if _, isErr := call(t, cs, "t", "stop", map[string]any{"id": ids[1]}); isErr {
		t.Fatal("stop")
	}
	// The sixth start today, another conversation's; stop-all stops
	// every conversation's.
	startBg(t, cs, "t2", "sleep", mark())
	stopAll := exec.Command(testenv.Bin(t, "lnk-run-tool"), "stop-all", "--agent", a.Name)
	stopAll.Env = append(os.Environ(), "HOME="+a.Home)
	if out, err := stopAll.CombinedOutput(); err != nil {
		t.Fatalf("lnk-run-tool stop-all: %v %s", err, out)
	}
	for _, th := range []string{"t", "t2"} {
		if text, _ := call(t, cs, th, "list", nil); strings.Contains(text, "running") || !strings.Contains(text, "ended") {
			t.Fatalf("%s after StopAll: %q", th, text)
		}
	}
	text, isErr = call(t, cs, "t", "start", map[string]any{"argv": []string{"true"}})
	if !isErr || !strings.Contains(text, "6 background commands started today (UTC), the most a day ([tool.run] background_per_day = 6)") {
		t.Fatalf("a seventh today: %v %q", isErr, text)
	}
}

// TestBackgroundOutputCapAndTimeout: output past background_output is
// not written and the record says cut; a command past background_timeout
// is ended with its group, the record saying timeout.
func TestBackgroundOutputCapAndTimeout(t *testing.T) {
	a := testAgent(t, "[tool.run]\nbackground_output = 100\nbackground_timeout = \"2s\"\n")
	cs := connect(t, a)
	id := startBg(t, cs, "t", "sh", "-c", "i=0; while [ $i -lt 50 ]; do echo 0123456789; i=$((i+1)); done")
	m := mark()
	slow := startBg(t, cs, "t", "sh", "-c", "sleep "+m)
	if !waitFor(10*time.Second, func() bool { return readRecord(t, a, id).State == StateEnded }) {
		t.Fatal("never ended")
	}
	r := readRecord(t, a, id)
	out, _ := os.ReadFile(filepath.Join(a.FilesDir(), "background", id+".out"))
	if r.Reason != EndExited || r.Code != 0 || !r.Cut || r.Output != 550 || len(out) != 100 {
		t.Fatalf("record %+v, %d bytes written", r, len(out))
	}
	if !waitFor(10*time.Second, func() bool { return readRecord(t, a, slow).State == StateEnded }) {
		t.Fatal("the slow one never ended")
	}
	if r := readRecord(t, a, slow); r.Reason != EndTimeout || len(processesWith("sleep", m)) != 0 {
		t.Fatalf("the slow one: %+v", r)
	}
}

// TestSupervisorKilledEndsTheGroup: SIGKILL of a supervisor ends its
// command's whole group (the sandbox dies with it), and the next list
// finds the lock free and records the end, consistently: one record,
// ended, and one ending.
func TestSupervisorKilledEndsTheGroup(t *testing.T) { supervisorKilled(t, false) }

// TestSupervisorKilledEndsTheGroupBehindAProxy: the same with [internet]
// on, where lnk sandbox run stays, the sandbox's parent, beside its
// proxy: it dies with the supervisor (PR_SET_PDEATHSIG), and its sandbox
// with it.
func TestSupervisorKilledEndsTheGroupBehindAProxy(t *testing.T) { supervisorKilled(t, true) }

func supervisorKilled(t *testing.T, proxy bool) {
	a := testAgent(t, "")
	if proxy {
		testenv.Bin(t, "lnk-netbroker")
		spec := strings.Replace(baseSpec, "on = false", "on = true", 1)
		os.WriteFile(filepath.Join(a.Home, "Link", "Agents", "ada", "Config", "sandbox.toml"), []byte(spec), 0o600)
	}
	cs := connect(t, a)
	m := mark()
	id := startBg(t, cs, "t", "sh", "-c", "(setsid sleep "+m+"1 &); sleep "+m)
	if !waitFor(10*time.Second, func() bool { return len(processesWith("sleep", m))+len(processesWith("sleep", m+"1")) == 2 }) {
		t.Fatal("not running")
	}
	r := readRecord(t, a, id)
	// Only the supervisor holds the lock: not lnk sandbox run, which
	// behind a proxy stays the group's leader.
	if holders := holding(filepath.Join(bgDir(a), id+".lock"), r.Group.PID); len(holders) != 0 {
		t.Fatalf("the sandbox's leader holds its lock: %v", holders)
	}
	if holders := holding(filepath.Join(bgDir(a), id+".lock"), r.Supervisor.PID); len(holders) != 1 {
		t.Fatalf("the supervisor does not hold its lock (the control): %v", holders)
	}
	if err := syscall.Kill(r.Supervisor.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return len(processesWith("sleep", m))+len(processesWith("sleep", m+"1")) == 0 }) {
		t.Fatal("the supervisor's SIGKILL left its command running")
	}
	if r := readRecord(t, a, id); r.State != StateRunning {
		t.Fatalf("before a sweep the record is as the supervisor left it: %+v", r)
	}
	// The lock is free once the last process of the supervisor's is
	// gone, which on a loaded machine may come a moment after its
	// command's: until then a list says running, and sweeps nothing.
	var text string
	if !waitFor(10*time.Second, func() bool {
		text, _ = call(t, cs, "t", "list", nil)
		return strings.Contains(text, id+" ended") && strings.Contains(text, EndOrphaned)
	}) {
		t.Fatalf("list after the supervisor died: %q", text)
	}
	if r := readRecord(t, a, id); r.State != StateEnded || r.Reason != EndOrphaned {
		t.Fatalf("record: %+v", r)
	}
	ents, _ := os.ReadDir(bgDir(a))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{".all.lock", id + ".ending.json", id + ".json", id + ".lock", "starts.json"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("the background folder holds %v, want %v", names, want)
	}
}

// holding lists pid's descriptors open on path.
func holding(path string, pid int) []string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		// An undumpable process's fds are root's to list (the run tool
		// and its supervisor are undumpable): whether the file's flock
		// is held is what an owner can learn.
		return flockedBy(path, pid)
	}
	var fds []string
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == path {
			fds = append(fds, e.Name())
		}
	}
	return fds
}

// flockedBy says whether path's flock is held (taking it, without
// waiting, fails), for a holder whose fds are not ours to list: the
// record's lock, which only its supervisor holds.
func flockedBy(path string, pid int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return nil
	}
	return []string{"flock"}
}
