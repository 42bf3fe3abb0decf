package agentlife

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// floodLine is the length of the flood harness's lines: longer than one
// copy of the supervisor's, so a kill lands inside one.
const floodLine = 50_000

// TestSupervisorKilledMidAppend: a supervisor SIGKILLed while its
// harness writes a stream of long lines leaves at most its last line
// torn; the next start ends that line before it records its offset, so
// the new start's output begins a line of its own at that offset, every
// earlier line is a whole flood line or (the last) a piece of one, and
// lnk agent logs shows only the new start's lines, whole.
func TestSupervisorKilledMidAppend(t *testing.T) {
	w := newWorld(t, "flood", "flood")
	w.mustLnk("agent", "start", w.agent)
	w.waitFor("a long stream in the log", func() bool { return strings.Count(w.log(), "\n") > 20 })
	s := w.status()
	if err := syscall.Kill(s.Supervisor, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the killed supervisor's lock let go", func() bool { return !w.status().Running })
	w.waitFor("every process of the harness gone", func() bool { return len(w.marked()) == 0 })
	before := int64(len(w.log()))

	// The next start runs a harness that only says it listens: what
	// lnk agent logs shows is then this start's alone, whole.
	cfg := filepath.Join(w.home, "Link", "Agents", w.agent, "Config", "agent.toml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(w.agentTOML(), `"flood"]`, `"listen"]`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	w.mustLnk("agent", "start", w.agent)
	w.waitFor("the new harness listening", func() bool { return strings.Contains(w.log()[before:], "listening on") })
	w.mustLnk("agent", "stop", w.agent)

	log := w.log()
	off := w.startOffset()
	if off < before || off > before+1 {
		t.Fatalf("the new start's offset %d, the log held %d before it", off, before)
	}
	if log[off-1] != '\n' {
		t.Fatalf("the killed supervisor's last line runs into the new start's: %q", log[off-80:off+80])
	}
	if !strings.HasPrefix(log[off:], "harness "+w.mark) {
		t.Fatalf("the new start does not begin its own line: %.80q", log[off:])
	}
	old := strings.Split(strings.TrimSuffix(log[:off], "\n"), "\n")
	for i, l := range old {
		if !strings.HasPrefix(l, "flood ") {
			continue // the harness's own first lines
		}
		whole, piece := floodLineIs(l)
		if !whole && (!piece || i != len(old)-1) {
			t.Fatalf("line %d of the killed run is torn and not its last: %.80q", i, l)
		}
	}
	code, out, errs := w.lnkCmd("agent", "logs", w.agent)
	if code != 0 {
		t.Fatalf("lnk agent logs: %d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "harness "+w.mark) {
		t.Fatalf("lnk agent logs begins %.80q, want the new start's first line", lines[0])
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "flood ") || strings.Contains(l, "xxxx") {
			t.Fatalf("lnk agent logs shows the killed run's output: %.80q", l)
		}
	}
	if !strings.Contains(out, "listening on") {
		t.Fatalf("lnk agent logs misses the new start's lines:\n%s", out)
	}
}

// floodLineIs says whether l is a whole line of the flood harness's, or
// the first part of one.
func floodLineIs(l string) (whole, piece bool) {
	f := strings.SplitN(l, " ", 3)
	if len(f) < 3 || f[0] != "flood" || strings.Trim(f[1], "0123456789") != "" {
		return false, len(f) < 3
	}
	if f[2] == strings.Repeat("x", floodLine) {
		return true, false
	}
	return false, len(f[2]) < floodLine && strings.Trim(f[2], "x") == ""
}
