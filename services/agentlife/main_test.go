package agentlife

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// The test binary is also the harness the tests start: run as
// `agentlife.test agentlife-harness MARK MODE`, it says what it sees,
// listens on LNK_PORT where it has one, and waits; MARK finds its
// processes in /proc.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "agentlife-harness" {
		harnessMain(os.Args[2], os.Args[3])
		return
	}
	os.Exit(m.Run())
}

func harnessMain(mark, mode string) {
	fmt.Printf("harness %s port=%s sandbox=%s\n", mark, os.Getenv("LNK_PORT"), os.Getenv("LNK_SANDBOX"))
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, fd := range fds {
			target, _ := os.Readlink("/proc/self/fd/" + fd.Name())
			fmt.Printf("fd %s %s\n", fd.Name(), target)
		}
	}
	switch mode {
	case "truncate":
		// The log's own descriptor would let it do this.
		fmt.Printf("truncating stdout: %v\n", syscall.Ftruncate(1, 0))
	case "fail":
		os.Exit(3)
	case "fork":
		self, _ := os.Executable()
		c := exec.Command(self, "agentlife-harness", mark, "child")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			fmt.Println("fork:", err)
			os.Exit(1)
		}
		fmt.Printf("child %d\n", c.Process.Pid)
	}
	if p := os.Getenv("LNK_PORT"); p != "" && mode != "child" {
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		defer ln.Close()
		fmt.Printf("listening on %s\n", ln.Addr())
	}
	if mode == "spew" {
		// Numbered lines of 1000 bytes, as fast as the pipe takes them,
		// past two of the log's bounds, then waiting.
		for n := 0; n < 3*MaxLog/1000; n++ {
			fmt.Printf("spew %09d %s\n", n, strings.Repeat("s", 1000-len("spew 000000000 \n")))
		}
		fmt.Println("spew done")
	}
	if mode == "flood" {
		// Long lines, each written in two halves a moment apart, so
		// the supervisor's copy often ends between them: a SIGKILL then
		// leaves the log's last line torn.
		for n := 0; ; n++ {
			line := fmt.Sprintf("flood %d %s\n", n, strings.Repeat("x", floodLine))
			os.Stdout.WriteString(line[:len(line)/2])
			time.Sleep(10 * time.Millisecond)
			os.Stdout.WriteString(line[len(line)/2:])
		}
	}
	for {
		time.Sleep(time.Hour)
	}
}

// world is one test's HOME, agent and harness.
type world struct {
	t     testing.TB
	home  string
	lnk   string
	agent string
	id    string
	mark  string // in every harness process's command line
	self  string // the harness's program: this test binary
}

// newWorld makes agent name, its [start] command this binary in mode,
// and its block of ports a free pair (two ports: [start] ports = 1).
func newWorld(t testing.TB, name, mode string) *world {
	t.Helper()
	testenv.Require(t, haveBwrap(), "bubblewrap")
	w := &world{t: t, home: testenv.Home(t), lnk: testenv.Bin(t, "lnk"), agent: name}
	for _, b := range []string{"lnk-init", "lnk-netbroker"} {
		testenv.Bin(t, b)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	w.mark = "mark" + hex.EncodeToString(rnd[:])
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w.self = self
	// The kernel runs as the owner's service would, before any agent:
	// not one of the supervisor's processes (lnk agent start starts one
	// outside the supervisor when none runs; in the foreground the
	// supervisor is that same process).
	w.mustLnk("kernel", "start")
	w.mustLnk("agent", "create", name)
	w.mustLnk("agent", "allow", name, "--command", self)
	a, err := readAgentID(w.home, name)
	if err != nil {
		t.Fatal(err)
	}
	w.id = a
	first := freePorts(t, 2)
	w.appendAgentTOML(fmt.Sprintf("\n[start]\ncommand = [%q, \"agentlife-harness\", %q, %q]\nports = 1\n\n[ports]\nfirst = %d\ncount = 2\n", self, w.mark, mode, first))
	t.Cleanup(func() {
		exec.Command(w.lnk, "agent", "stop", name).Run()
		for end := time.Now().Add(10 * time.Second); len(w.marked()) > 0 && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if pids := w.marked(); len(pids) > 0 {
			t.Errorf("after the test's stop, processes of its harness still run: %v", pids)
			for _, p := range pids {
				syscallKill(p)
			}
		}
	})
	return w
}

func haveBwrap() bool { _, err := exec.LookPath("bwrap"); return err == nil }

func readAgentID(home, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(home, "Link", "Agents", name, "Config", "agent.toml"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "id = "); ok {
			return strings.Trim(v, `"`), nil
		}
	}
	return "", fmt.Errorf("no id in agent.toml")
}

func (w *world) agentTOML() string {
	b, err := os.ReadFile(filepath.Join(w.home, "Link", "Agents", w.agent, "Config", "agent.toml"))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *world) appendAgentTOML(s string) {
	p := filepath.Join(w.home, "Link", "Agents", w.agent, "Config", "agent.toml")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		w.t.Fatal(err)
	}
}

// freePorts finds n consecutive ports nothing listens on now.
func freePorts(t testing.TB, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		first := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := first+n-1 <= 65535
		for p := first; ok && p < first+n; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return first
		}
	}
	t.Fatal("no free ports")
	return 0
}

// lnkCmd runs lnk with args: its exit code, stdout and stderr.
func (w *world) lnkCmd(args ...string) (int, string, string) {
	w.t.Helper()
	var out, errb strings.Builder
	c := exec.Command(w.lnk, args...)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func (w *world) mustLnk(args ...string) string {
	w.t.Helper()
	code, out, errs := w.lnkCmd(args...)
	if code != 0 {
		w.t.Fatalf("lnk %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// status is lnk agent status --json, read back.
type status struct {
	Running    bool   `json:"running"`
	PID        int    `json:"pid"`
	Supervisor int    `json:"supervisor_pid"`
	Mode       string `json:"mode"`
	Starts     int    `json:"starts"`
	Sandbox    bool   `json:"sandbox"`
	RunningIn  *bool  `json:"running_in"`
	Ports      *struct {
		First, Count int
	} `json:"ports"`
	Log      string           `json:"log"`
	LastExit string           `json:"last_exit"`
	Enforces []map[string]any `json:"enforces"`
}

func (w *world) status() status {
	w.t.Helper()
	var s status
	if err := json.Unmarshal([]byte(w.mustLnk("agent", "status", w.agent, "--json")), &s); err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *world) logPath() string {
	return filepath.Join(w.home, ".lnk", "agents", w.agent, "logs", "harness.log")
}

func (w *world) log() string {
	b, _ := os.ReadFile(w.logPath())
	return string(b)
}

// startOffset is logs/harness.start, read back.
func (w *world) startOffset() int64 {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, ".lnk", "agents", w.agent, "logs", "harness.start"))
	if err != nil {
		w.t.Fatal(err)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		w.t.Fatalf("harness.start holds %q: %v", b, err)
	}
	return n
}

// marked lists the processes whose command line holds w.mark.
func (w *world) marked() []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), w.mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFor polls cond until it holds, failing after a bound far beyond
// what any start takes (never a measure of speed).
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	end := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			w.t.Fatalf("never came: %s\nlog:\n%s", what, w.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func syscallKill(pid int) {
	p, err := os.FindProcess(pid)
	if err == nil {
		p.Kill()
	}
}

// procTree is every process under root (root too), by pid, with its
// start time: what must be gone, whatever it is (bwrap, the proxy, the
// harness), once the agent stops.
func procTree(t *testing.T, root int) map[int]string {
	t.Helper()
	parent := map[int]int{}
	start := map[int]string{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, st, ok := ppidAndStart(pid)
		if ok {
			parent[pid], start[pid] = ppid, st
		}
	}
	tree := map[int]string{}
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				tree[pid] = start[pid]
				break
			}
		}
	}
	return tree
}

func ppidAndStart(pid int) (int, string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 || f[0] == "Z" {
		return 0, "", false
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid, f[19], true
}

// survivors lists the processes of tree still running (the same pid
// and start time, not a zombie).
func survivors(tree map[int]string) []int {
	var left []int
	for pid, st := range tree {
		if _, now, ok := ppidAndStart(pid); ok && now == st {
			left = append(left, pid)
		}
	}
	return left
}
