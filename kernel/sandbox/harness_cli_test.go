package sandbox_test

import (
	"encoding/json"
	"lnk.dev/lnk/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// lnk agent harness run and check, for real: the built lnk, bubblewrap,
// landlock, seccomp and the proxy.

// harnessWorld is an agent "a" whose agent.toml names harness "h", with
// a second harness "h2" installed (its home made), and a folder each
// harness's layer grants and the agent's own grants do not, plus one
// none grants. Each folder holds a file naming it.
type harnessWorld struct {
	world
	agentDir, onlyH, onlyH2, none string
	team                          string // ~/Link/Teams/t, which no grant names
}

func newHarnessWorld(t *testing.T) harnessWorld {
	t.Helper()
	w := harnessWorld{world: newWorld(t)}
	if _, err := caps.CreateAgent(w.home, "a"); err != nil {
		t.Fatal(err)
	}
	if err := caps.SetHarness(w.home, "a", "h"); err != nil {
		t.Fatal(err)
	}
	w.agentDir = filepath.Join(w.home, "Link", "Agents", "a")
	if err := os.MkdirAll(filepath.Join(w.agentDir, "Harnesses", "h2"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*string{&w.onlyH, &w.onlyH2, &w.none} {
		dir, err := os.MkdirTemp(w.home, "grant-")
		if err != nil {
			t.Fatal(err)
		}
		*d = dir
		write(t, filepath.Join(dir, "f"), "content-of-"+filepath.Base(dir))
	}
	w.team = filepath.Join(w.home, "Link", "Teams", "t")
	if err := os.MkdirAll(w.team, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.team, "f"), "team-content")
	layers := filepath.Join(w.home, ".lnk", "harnesses")
	if err := os.MkdirAll(layers, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(layers, "h.toml"), "[files]\nread = [\""+w.onlyH+"\"]\n")
	write(t, filepath.Join(layers, "h2.toml"), "[files]\nread = [\""+w.onlyH2+"\"]\n")
	return w
}

// readAll is a script that tries each folder's file and says what it
// found, then where HOME is and whether it writes there.
const readAll = `for d in "$@"; do cat "$d/f" 2>/dev/null || echo "no-${d##*/}"; echo; done
echo "HOME=$HOME"; (echo written > "$HOME/note") 2>/dev/null && echo WROTE-HOME; exit 0`

// TestHarnessRunSeesExactlyItsLayer: lnk agent harness run reads a folder
// its harness's layer grants and the agent's own grants don't, and not
// one neither grants, nor another harness's; HOME is the harness's own
// home, written from inside and read back from outside; the command's
// status comes back. The agent's own sandbox (lnk sandbox run --agent,
// with agent.toml's harness h) sees h's folder but not h2's.
func TestHarnessRunSeesExactlyItsLayer(t *testing.T) {
	w := newHarnessWorld(t)
	name := func(d string) string { return filepath.Base(d) }
	for _, c := range []struct {
		args      []string
		home      string // "" : the agent's files folder
		see, miss []string
	}{
		{[]string{"agent", "harness", "run", "a", "--"}, filepath.Join(w.agentDir, "Harnesses", "h"), []string{w.onlyH}, []string{w.onlyH2, w.none}},
		{[]string{"agent", "harness", "run", "a", "--harness", "h2", "--"}, filepath.Join(w.agentDir, "Harnesses", "h2"), []string{w.onlyH2}, []string{w.onlyH, w.none}},
		{[]string{"sandbox", "run", "--agent", "a", "--"}, "", []string{w.onlyH}, []string{w.onlyH2, w.none}},
	} {
		t.Run(strings.Join(c.args[:len(c.args)-1], " "), func(t *testing.T) {
			args := append(append([]string{}, c.args...), "sh", "-c", readAll, "sh", w.onlyH, w.onlyH2, w.none)
			code, out, errs := lnk(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			for _, d := range c.see {
				if !strings.Contains(out, "content-of-"+name(d)) {
					t.Errorf("%s, granted, not read:\n%s", d, out)
				}
			}
			for _, d := range c.miss {
				if strings.Contains(out, "content-of-"+name(d)) || !strings.Contains(out, "no-"+name(d)) {
					t.Errorf("%s, not granted, read:\n%s", d, out)
				}
			}
			if c.home == "" {
				if !strings.Contains(out, "HOME="+filepath.Join(w.agentDir, "Home")+"\n") {
					t.Errorf("the agent's HOME is not its files folder:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "HOME="+c.home+"\n") || !strings.Contains(out, "WROTE-HOME") {
				t.Fatalf("HOME is not the harness's home %s, or it was not written:\n%s\n%s", c.home, out, errs)
			}
			if b, err := os.ReadFile(filepath.Join(c.home, "note")); err != nil || string(b) != "written\n" {
				t.Fatalf("the note written in the harness's home: %q, %v", b, err)
			}
		})
	}
	if code, _, errs := lnk(t, "agent", "harness", "run", "a", "--", "sh", "-c", "exit 7"); code != 7 {
		t.Fatalf("the command's status 7 came back as %d: %s", code, errs)
	}
}

// TestHarnessRunLogsUnderItsOwnName: a connection the proxy refuses (to
// the host's loopback, which no grant names) is logged as
// a/h-run for lnk agent harness run, and as a for the agent's own
// sandbox: the harness's run is never taken for the running agent's.
func TestHarnessRunLogsUnderItsOwnName(t *testing.T) {
	w := newHarnessWorld(t)
	// bash's /dev/tcp reaches the proxy's relay (HTTP_PROXY) with a
	// request for the sandbox's host loopback, which the proxy refuses.
	script := `p=${HTTP_PROXY#http://}; exec 3<>"/dev/tcp/${p%:*}/${p##*:}" || exit 9
printf 'GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nConnection: close\r\n\r\n' >&3
head -c 12 <&3`
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"agent", "harness", "run", "a", "--"}, "a/h-run"},
		{[]string{"sandbox", "run", "--agent", "a", "--"}, "a"},
	} {
		if code, out, errs := lnk(t, append(c.args, "bash", "-c", script)...); code != 0 || !strings.Contains(out, "HTTP/1.1 4") {
			t.Fatalf("%v: exit %d, want the proxy's refusal: %q %s", c.args, code, out, errs)
		}
		if n := auditAgentLines(t, w.home, "refuse", c.name, "127.0.0.1:9", ""); n < 1 {
			b, _ := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
			t.Fatalf("%v: no refusal of 127.0.0.1:9 logged as %q:\n%s", c.args, c.name, b)
		}
	}
}

// auditAgentLines counts the lines of kind in home's audit log for agent
// (exactly) whose route is route ("": any) and whose reason holds reason.
func auditAgentLines(t *testing.T, home, kind, agent, route, reason string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		var e struct{ Kind, Agent, Route, Reason string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Kind == kind && e.Agent == agent && (route == "" || e.Route == route) && strings.Contains(e.Reason, reason) {
			n++
		}
	}
	return n
}

// TestHarnessCheckPassesThenFindsAPlantedHole: lnk agent harness check
// passes in a good sandbox, its probes writing the harness's home and
// reading its layer's folder (controls, open), and reading another
// harness's home (h2's) and a team's folder it isn't granted closed; on a
// kernel without landlock (--degraded) it is refused.
func TestHarnessCheckPassesThenFindsAPlantedHole(t *testing.T) {
	w := newHarnessWorld(t)
	code, out, errs := lnk(t, "agent", "harness", "check", "a", "--json")
	var rs []probe.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("exit %d, no JSON: %v\n%s\n%s", code, err, out, errs)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s\n%+v", code, errs, rs)
	}
	var wroteHome, readLayer, otherHarness, otherTeam bool
	for _, r := range rs {
		if r.Name == "read a team's folder not granted" && r.Arg == w.team && r.Got == probe.Closed {
			otherTeam = true
		}
		if r.Name == "read another harness's home" && r.Arg == filepath.Join(w.agentDir, "Harnesses", "h2") && r.Got == probe.Closed {
			otherHarness = true
		}
		if strings.Contains(r.Name, filepath.Join(w.agentDir, "Harnesses", "h")) && strings.HasPrefix(r.Name, "write granted") && r.Got == probe.Open {
			wroteHome = true
		}
		if strings.Contains(r.Name, w.onlyH) && r.Got == probe.Open {
			readLayer = true
		}
		if strings.Contains(r.Name, w.onlyH2) || strings.Contains(r.Name, w.none) {
			t.Errorf("a probe names a folder the harness's sandbox doesn't grant: %+v", r)
		}
	}
	if !wroteHome || !readLayer || !otherHarness || !otherTeam {
		t.Fatalf("no open control for the harness's home (%v) or its layer's folder (%v), or h2's home (%v) or a team's folder (%v) not tried closed: %+v", wroteHome, readLayer, otherHarness, otherTeam, rs)
	}
	// On a kernel without landlock (simulated by a seccomp filter with
	// no_new_privs over lnk, which makes lnk a process the kernel refuses
	// as a peer: kernel/peer.go) the harness's check, whose sandbox the
	// kernel starts, fails closed: refused, nothing reported as passing.
	// The probes' own finding of a hole without landlock is
	// TestCheckFailsWhenAProbeFindsItOpen's, through the same
	// reportProbes.
	code, out, errs = lnkWithout(t, "landlock", "agent", "harness", "check", "a", "--degraded")
	if code == 0 || strings.Contains(out, "PASS") || !strings.Contains(errs, "kernel") {
		t.Fatalf("without landlock: exit %d, want a refusal by the kernel\n%s\n%s", code, out, errs)
	}
}

// TestHarnessCommandsWithTheSandboxOff: with the agent's no-sandbox
// setting on, lnk agent harness check refuses (exit 3, one line and a
// hint, logged once) and runs nothing; lnk agent harness run, as
// security.txt ("Running a command in its sandbox") says, warns (on
// stderr and in the log) and runs the command unconfined (no seccomp
// filter, no_new_privs off) with the harness's home as HOME, beside a
// proxy of its own on a free loopback port, which it is told as a
// sandbox is and which logs its calls under the harness's name
// (a/h-run): a connection through it to a loopback port the harness is
// not granted is refused and logged so. With the sandbox on again (the
// positive control) the same command runs confined.
func TestHarnessCommandsWithTheSandboxOff(t *testing.T) {
	w := newHarnessWorld(t)
	testenv.Bin(t, "lnk-netbroker")
	curl, err := exec.LookPath("curl")
	testenv.Require(t, err == nil, "curl, the proxy's client in this test")
	file := filepath.Join(w.agentDir, "Config", "agent.toml")
	on, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, string(on)+"no_sandbox = true\n")
	code, out, errs := lnk(t, "agent", "harness", "check", "a")
	if code != 3 || !strings.Contains(errs, "runs with its sandbox off") || !strings.Contains(errs, "\n  hint: lnk agent show a") || out != "" {
		t.Fatalf("check with the sandbox off: exit %d, want 3 and the reason\n%s\n%s", code, out, errs)
	}
	if strings.Count(errs, "\n") != 2 {
		t.Errorf("check: not one line and its hint:\n%s", errs)
	}
	if n := auditLines(t, w.home, "refuse", "sandbox off"); n != 1 {
		t.Errorf("%d refusals logged, want one", n)
	}
	probe := `echo "home=$HOME"; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; echo "proxy=$ALL_PROXY"; ` +
		curl + ` -sS -o /dev/null -w 'http=%{http_code}\n' --max-time 20 -x "$ALL_PROXY" http://127.0.0.1:9/ 2>&1; true`
	code, out, errs = lnk(t, "agent", "harness", "run", "a", "--", "sh", "-c", probe)
	if code != 0 {
		t.Fatalf("run with the sandbox off: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "WITHOUT its sandbox") || !strings.Contains(errs, "hint: lnk agent start --sandbox a") {
		t.Fatalf("no warning on stderr:\n%s", errs)
	}
	if n := auditLines(t, w.home, "warn", "WITHOUT its sandbox"); n != 1 {
		t.Errorf("%d warnings logged, want one", n)
	}
	hh := filepath.Join(w.agentDir, "Harnesses", "h")
	if !strings.Contains(out, "home="+hh+"\n") || !strings.Contains(out, "Seccomp:\t0") || !strings.Contains(out, "NoNewPrivs:\t0") {
		t.Fatalf("the command did not run unconfined with the harness's home:\n%s", out)
	}
	if !regexp.MustCompile(`proxy=socks5h://lnk:[^@\s]+@127\.0\.0\.1:[0-9]+\n`).MatchString(out) {
		t.Fatalf("the command was not told its loopback proxy:\n%s", out)
	}
	if strings.Contains(out, "http=200") {
		t.Fatalf("an ungranted loopback port was reached through the proxy:\n%s", out)
	}
	var refused int
	b, _ := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
	for _, l := range strings.Split(string(b), "\n") {
		var e struct{ Kind, Agent, Route string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Kind == "refuse" && e.Agent == "a/h-run" && e.Route == "127.0.0.1:9" {
			refused++
		}
	}
	if refused == 0 {
		t.Fatalf("the proxy logged no refusal under a/h-run:\n%s", b)
	}

	write(t, file, string(on))
	code, out, errs = lnk(t, "agent", "harness", "run", "a", "--", "sh", "-c", "grep -E '^Seccomp:' /proc/self/status")
	if code != 0 || strings.Contains(out, "Seccomp:\t0") || strings.Contains(errs, "WITHOUT") {
		t.Fatalf("with the sandbox on: exit %d, want it confined and no warning\n%s\n%s", code, out, errs)
	}
}

// TestHarnessRunLogsToolCallsUnderItsOwnName: a call from a harness's
// run to a tool its sandbox is not granted, through its tool bridge, is
// refused and logged as a/h-run; the same call from the agent's own
// sandbox is logged as a.
func TestHarnessRunLogsToolCallsUnderItsOwnName(t *testing.T) {
	w := newHarnessWorld(t)
	if code, out, errs := lnk(t, "sandbox", "tool", "add", "notes", "--", "/bin/cat"); code != 0 {
		t.Fatalf("tool add: %d %s %s", code, out, errs)
	}
	if code, out, errs := lnk(t, "agent", "allow", "a", "--tool", "notes"); code != 0 {
		t.Fatalf("allow --tool: %d %s %s", code, out, errs)
	}
	// A POST, through the relay, to the bridge's route for a tool named
	// other, which no grant names.
	script := `[ -n "$LNK_TOOL_NOTES" ] || exit 8
p=${HTTP_PROXY#http://}; u=${LNK_TOOL_NOTES#http://*/}; u=/${u%notes}other
body='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
exec 3<>"/dev/tcp/${p%:*}/${p##*:}" || exit 9
printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$u" "${#body}" "$body" >&3
head -c 12 <&3`
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"agent", "harness", "run", "a", "--"}, "a/h-run"},
		{[]string{"sandbox", "run", "--agent", "a", "--"}, "a"},
	} {
		code, out, errs := lnk(t, append(c.args, "bash", "-c", script)...)
		if code != 0 || !strings.Contains(out, "HTTP/1.1 403") {
			t.Fatalf("%v: exit %d, want the bridge's refusal: %q %s", c.args, code, out, errs)
		}
		if n := auditAgentLines(t, w.home, "refuse", c.name, "", "not granted"); n < 1 {
			b, _ := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
			t.Fatalf("%v: no refusal logged as %q:\n%s", c.args, c.name, b)
		}
	}
}
