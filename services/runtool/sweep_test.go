package runtool

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
)

// unrelated starts `sleep` leading a session of its own (so a group
// whose ID is its pid), as any other program of the machine could.
func unrelated(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "300")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// plant writes a running record whose supervisor is gone (its lock
// free) naming group as its group, with leader start time start.
func plant(t *testing.T, a *Agent, s *store, id string, group int, start uint64) {
	t.Helper()
	boot, err := procstat.BootID()
	if err != nil {
		t.Fatal(err)
	}
	r := &Record{ID: id, Thread: "t", Argv: []string{"sleep"}, State: StateRunning, Started: time.Now().UTC(), Boot: boot,
		Supervisor: Proc{PID: 999999, Start: 1}, Group: Proc{PID: group, Start: start}}
	if err := s.write(r); err != nil {
		t.Fatal(err)
	}
}

// TestSweepKillsOnlyWhatIsSurelyTheCommands: a record whose supervisor
// is gone and whose group's ID is now an unrelated live process's (the
// pid reused: another start time) is ended without killing it; one
// naming another boot kills nothing either; one naming that process
// with its own start time (the control) kills its group.
func TestSweepKillsOnlyWhatIsSurelyTheCommands(t *testing.T) {
	a := testAgent(t, "")
	s, err := a.openStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reused, other, mine := unrelated(t), unrelated(t), unrelated(t)
	st, _ := procstat.Read(reused.Process.Pid)
	plant(t, a, s, "00000000000000a1", reused.Process.Pid, st.Start+1)
	ost, _ := procstat.Read(other.Process.Pid)
	plant(t, a, s, "00000000000000a2", other.Process.Pid, ost.Start)
	r, _ := s.read("00000000000000a2")
	r.Boot = "00000000-0000-0000-0000-000000000000"
	s.write(r)
	mst, _ := procstat.Read(mine.Process.Pid)
	plant(t, a, s, "00000000000000a3", mine.Process.Pid, mst.Start)

	left, running, err := a.sweep(s, time.Hour)
	if err != nil || running != 0 || len(left) != 3 {
		t.Fatalf("sweep: %d running, %d left, %v", running, len(left), err)
	}
	for _, id := range []string{"00000000000000a1", "00000000000000a2", "00000000000000a3"} {
		if r, _ := s.read(id); r.State != StateEnded || r.Reason != EndOrphaned {
			t.Fatalf("%s: %+v", id, r)
		}
		if _, err := os.Stat(filepath.Join(bgDir(a), id+".ending.json")); err != nil {
			t.Fatalf("%s's ending: %v", id, err)
		}
	}
	if !alive(reused.Process.Pid) {
		t.Fatal("the sweep killed an unrelated process whose pid a record named (another start time)")
	}
	if !alive(other.Process.Pid) {
		t.Fatal("the sweep killed a process named by a record of another boot")
	}
	if !waitFor(2*time.Second, func() bool { return !alive(mine.Process.Pid) }) {
		t.Fatal("the sweep left running the group its record surely names")
	}
}

// TestSweepWithALiveSupervisorKillsNothing: a record whose lock is held
// (its supervisor alive) is left running, whatever it names.
func TestSweepWithALiveSupervisorKillsNothing(t *testing.T) {
	a := testAgent(t, "")
	s, err := a.openStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := unrelated(t)
	st, _ := procstat.Read(p.Process.Pid)
	plant(t, a, s, "00000000000000b1", p.Process.Pid, st.Start)
	f, ok, err := s.lock("00000000000000b1", false)
	if err != nil || !ok {
		t.Fatal(err)
	}
	defer f.Close()
	s2, _ := a.openStore()
	defer s2.Close()
	if _, running, err := a.sweep(s2, time.Hour); err != nil || running != 1 {
		t.Fatalf("%d running, %v", running, err)
	}
	if r, _ := s.read("00000000000000b1"); r.State != StateRunning || !alive(p.Process.Pid) {
		t.Fatalf("a held record was swept: %+v", r)
	}
}

// TestToldEndingIsKeptThenRemoved: an ending not yet told is kept however
// old; once told (MarkTold) the record, lock, ending and output go
// background_keep after, and not before.
func TestToldEndingIsKeptThenRemoved(t *testing.T) {
	a := testAgent(t, "")
	s, err := a.openStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := "00000000000000c1"
	out, err := a.createOutput(id)
	if err != nil {
		t.Fatal(err)
	}
	out.Close()
	r := &Record{ID: id, Thread: "t", Argv: []string{"true"}, State: StateEnded, Reason: EndExited, Started: time.Now().Add(-48 * time.Hour), Ended: time.Now().Add(-48 * time.Hour)}
	s.write(r)
	s.writeEnding(r)
	if left, _, _ := a.sweep(s, time.Hour); len(left) != 1 {
		t.Fatal("an ending not told was removed")
	}
	if err := a.MarkTold(id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bgDir(a), id+".ending.json")); !os.IsNotExist(err) {
		t.Fatalf("told, the ending stays: %v", err)
	}
	if left, _, _ := a.sweep(s, time.Hour); len(left) != 1 {
		t.Fatal("removed before background_keep after it was told")
	}
	if left, _, err := a.sweep(s, 0); len(left) != 0 || err != nil {
		t.Fatalf("kept past background_keep: %v", err)
	}
	for _, p := range []string{filepath.Join(bgDir(a), id+".json"), filepath.Join(bgDir(a), id+".lock"), filepath.Join(a.FilesDir(), "background", id+".out")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s stays: %v", p, err)
		}
	}
}

// TestOutputNeverThroughALink: Home/background a link to another folder
// refuses a start and writes nothing there; a real folder works.
func TestOutputNeverThroughALink(t *testing.T) {
	a := testAgent(t, "")
	elsewhere := filepath.Join(a.Home, "elsewhere")
	os.Mkdir(elsewhere, 0o700)
	os.Symlink(elsewhere, filepath.Join(a.FilesDir(), "background"))
	if _, err := a.createOutput("00000000000000d1"); err == nil {
		t.Fatal("the output was made through a link")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
	os.Remove(filepath.Join(a.FilesDir(), "background"))
	f, err := a.createOutput("00000000000000d1")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := a.createOutput("00000000000000d1"); err == nil {
		t.Fatal("an output made over one there")
	}
}

// TestEndingIsWrittenOnce: a second writer of an ending (a sweep racing
// the supervisor's last word) leaves the first as it was; a record with
// none gets one (the control).
func TestEndingIsWrittenOnce(t *testing.T) {
	a := testAgent(t, "")
	s, err := a.openStore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := &Record{ID: "00000000000000e1", Thread: "t", Argv: []string{"true"}, State: StateEnded, Reason: EndExited, Ended: time.Now().UTC()}
	if err := s.writeEnding(r); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(bgDir(a), r.ID+".ending.json")
	first, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(first, []byte(`"reason": "exited"`)) {
		t.Fatalf("%s %v", first, err)
	}
	r.Reason = EndOrphaned
	if err := s.writeEnding(r); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(p); !bytes.Equal(again, first) {
		t.Fatalf("an ending was written twice:\n%s", again)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}
