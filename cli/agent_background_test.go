package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/runtool"
)

// TestAgentDeleteEndsItsBackgroundCommands: lnk agent delete stops the
// agent's background command (its sleep gone) and removes its record and
// output before the folders move; an agent that never started one is
// deleted as before, and nothing is made for it.
func TestAgentDeleteEndsItsBackgroundCommands(t *testing.T) {
	requireBwrapForBackground(t)
	home := testenv.Home(t)
	bin := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	sup := testenv.Bin(t, "lnk-run-tool")
	for _, n := range []string{"ada", "bob"} {
		if code, _, errs := runLnk(t, "agent", "create", n); code != 0 {
			t.Fatal(errs)
		}
	}
	l := caps.Layout{Home: home}
	os.WriteFile(l.SandboxFile("ada"), []byte("[internet]\non = false\n[commands]\nallow = [\"sleep\"]\n"), 0o600)
	a, err := runtool.LoadAgent(home, "ada", bin)
	if err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("%d.%d", 3000+rand.IntN(1000), rand.IntN(1_000_000))
	r, err := a.Start("t", 0, runtool.Call{Argv: []string{"sleep", mark}}, []string{sup, "supervise"})
	if err != nil {
		t.Fatal(err)
	}
	// The supervisor says it started once the sandbox runs: the
	// command inside starts a moment later.
	for end := time.Now().Add(10 * time.Second); !sleeping(mark) && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if !sleeping(mark) {
		t.Fatal("not running")
	}
	if code, _, errs := runLnk(t, "agent", "delete", "ada"); code != 0 {
		t.Fatal(errs)
	}
	for end := time.Now().Add(3 * time.Second); sleeping(mark) && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if sleeping(mark) {
		t.Fatal("deleted, but its background command runs")
	}
	if _, err := os.Stat(filepath.Join(home, ".lnk", "agents", a.ID, "background", r.ID+".json")); !os.IsNotExist(err) {
		t.Fatalf("its record stays: %v", err)
	}
	moved, _ := filepath.Glob(filepath.Join(l.HistoryAgents(), "ada-*", "Home", "background", r.ID+".out"))
	if len(moved) != 0 {
		t.Fatalf("its output moved with it: %v", moved)
	}
	b, _ := caps.LoadAgent(home, "bob")
	if code, _, errs := runLnk(t, "agent", "delete", "bob"); code != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(home, ".lnk", "agents", b.ID)); !os.IsNotExist(err) {
		t.Fatalf("a folder was made for an agent with no background command: %v", err)
	}
}

func sleeping(mark string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), "sleep\x00"+mark) {
			return true
		}
	}
	return false
}

func requireBwrapForBackground(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
}

// TestAgentStopEndsItsBackgroundCommands: lnk agent stop --json of an
// agent whose harness is not running still ends its background command
// (its sleep gone) and keeps its record, now ended, for its ending to be
// told; while the command ran, the record said running (the control).
func TestAgentStopEndsItsBackgroundCommands(t *testing.T) {
	requireBwrapForBackground(t)
	home := testenv.Home(t)
	bin := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	sup := testenv.Bin(t, "lnk-run-tool")
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != 0 {
		t.Fatal(errs)
	}
	l := caps.Layout{Home: home}
	os.WriteFile(l.SandboxFile("ada"), []byte("[internet]\non = false\n[commands]\nallow = [\"sleep\"]\n"), 0o600)
	a, err := runtool.LoadAgent(home, "ada", bin)
	if err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("%d.%d", 3000+rand.IntN(1000), rand.IntN(1_000_000))
	r, err := a.Start("t", 0, runtool.Call{Argv: []string{"sleep", mark}}, []string{sup, "supervise"})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); !sleeping(mark) && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if !sleeping(mark) {
		t.Fatal("not running")
	}
	if got, err := a.List("t"); err != nil || len(got) != 1 || got[0].State == runtool.StateEnded {
		t.Fatalf("before the stop: %+v %v", got, err)
	}
	code, out, errs := runLnk(t, "agent", "stop", "ada", "--json")
	if code != 0 || !strings.Contains(out, `"running": false`) {
		t.Fatalf("stop --json: %d %s %s", code, out, errs)
	}
	for end := time.Now().Add(3 * time.Second); sleeping(mark) && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if sleeping(mark) {
		t.Fatal("stopped, but its background command runs")
	}
	if _, err := os.Stat(filepath.Join(home, ".lnk", "agents", a.ID, "background", r.ID+".json")); err != nil {
		t.Fatalf("its record is gone before its ending was told: %v", err)
	}
	if got, err := a.List("t"); err != nil || len(got) != 1 || got[0].State != runtool.StateEnded || got[0].Reason != runtool.EndStopped {
		t.Fatalf("after the stop: %+v %v", got, err)
	}
}

// TestAgentMoveEndsItsBackgroundCommands: the leaving side of a move
// (the pause's stop, then leaveAfterMove, what lnk agent move --ssh runs
// once the agent answers at the other end) ends the agent's background
// command and removes its record and output through the same code as
// lnk agent delete, and leaves its moved note. The control: after the
// pause's stop alone, the record and output are still there.
func TestAgentMoveEndsItsBackgroundCommands(t *testing.T) {
	requireBwrapForBackground(t)
	home := testenv.Home(t)
	bin := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	sup := testenv.Bin(t, "lnk-run-tool")
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != 0 {
		t.Fatal(errs)
	}
	l := caps.Layout{Home: home}
	os.WriteFile(l.SandboxFile("ada"), []byte("[internet]\non = false\n[commands]\nallow = [\"sleep\"]\n"), 0o600)
	a, err := runtool.LoadAgent(home, "ada", bin)
	if err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("%d.%d", 3000+rand.IntN(1000), rand.IntN(1_000_000))
	r, err := a.Start("t", 0, runtool.Call{Argv: []string{"sleep", mark}}, []string{sup, "supervise"})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); !sleeping(mark) && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if !sleeping(mark) {
		t.Fatal("not running")
	}
	record := filepath.Join(home, ".lnk", "agents", a.ID, "background", r.ID+".json")
	output := filepath.Join(l.FilesDir("ada"), "background", r.ID+".out")
	if code, _, errs := runLnk(t, "agent", "pause", "ada"); code != 0 {
		t.Fatal(errs)
	}
	for _, p := range []string{record, output} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("control: after the pause, %s is gone: %v", p, err)
		}
	}
	ag, err := caps.LoadAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaveAfterMove(home, "ada", "box"); err != nil {
		t.Fatal(err)
	}
	if sleeping(mark) {
		t.Fatal("moved, but its background command runs here")
	}
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("moved, but its record stays: %v", err)
	}
	moved, _ := filepath.Glob(filepath.Join(l.HistoryAgents(), "ada-*", "Home", "background", r.ID+".out"))
	if len(moved) != 0 {
		t.Fatalf("its output went to History with its Home: %v", moved)
	}
	if err := caps.CheckNotMoved(home, ag); err == nil {
		t.Fatal("no moved note after the leave")
	}
}
