package toolbridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// A tool call as an agent's harness makes it: a client in a process of
// its own through the sandbox's proxy (lnk-netbroker) and its tool route
// to the start's bridge, to the server; beside the same call from a
// client process of its own straight to the same server on stdio, the
// baseline. The client runs inside the real sandbox of `lnk sandbox run
// --agent` (client=sandboxed: the relay into the sandbox is on its path),
// or outside it on the proxy's socket (client=proxy-socket: the route and
// the bridge alone). With LNK_BENCH_BASE_BIN naming another build's
// binaries (scripts/bench.sh builds the commit before the bridge became
// the kernel's confined child, when lnk hosted it in its own
// goroutines), the same run through that build is measured too
// (the was-* columns). Every path is called in turns, one call each a
// round, so all see the same load; each client times its own call, so
// the benchmark's orders to it are not counted.
func BenchmarkToolsCallFromAClientProcess(b *testing.B) {
	for _, onSocket := range []bool{false, true} {
		from := map[bool]string{false: "sandboxed", true: "proxy-socket"}[onSocket]
		for _, sv := range servers {
			b.Run("client="+from+"/server="+sv.name, func(b *testing.B) {
				requireSandbox(b)
				link := sandboxedCaller(b, testenv.Bin(b, "lnk"), sv.tiny, sv.want, onSocket)
				var was *caller
				if dir := os.Getenv("LNK_BENCH_BASE_BIN"); dir != "" {
					was = sandboxedCaller(b, filepath.Join(dir, "lnk"), sv.tiny, sv.want, onSocket)
				}
				direct := directCaller(b, sv.tiny, sv.want)
				var tl, tw, td []time.Duration
				var kl, kw testenv.Usage // the kernel's, during the calls
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					u := testenv.UsageOf(link.kernel)
					tl = append(tl, link.call(b))
					kl = kl.Plus(testenv.UsageOf(link.kernel).Minus(u))
					if was != nil {
						u := testenv.UsageOf(was.kernel)
						tw = append(tw, was.call(b))
						kw = kw.Plus(testenv.UsageOf(was.kernel).Minus(u))
					}
					td = append(td, direct.call(b))
				}
				b.StopTimer()
				// How often a call wakes the kernel: the question is
				// whether a call's path pays for one.
				b.ReportMetric(float64(kl.Switches)/float64(b.N), "kernel-wakes/call")
				l, d := p50(tl), p50(td)
				b.ReportMetric(float64(l.Nanoseconds()), "link-p50-ns")
				b.ReportMetric(float64(d.Nanoseconds()), "base-p50-ns")
				b.ReportMetric(float64((l - d).Microseconds()), "added-p50-us")
				b.ReportMetric(float64(l)/float64(d), "x-baseline")
				if was != nil {
					w := p50(tw)
					b.ReportMetric(float64(w.Nanoseconds()), "was-p50-ns")
					b.ReportMetric(float64((w - d).Microseconds()), "was-added-p50-us")
					b.ReportMetric(float64(l-d)/float64(w-d), "added-x-was")
					b.ReportMetric(float64(kw.Switches)/float64(b.N), "was-kernel-wakes/call")
				}
			})
		}
	}
}

// caller is a client process the benchmark orders to make one call at a
// time: a line in, the call's time in nanoseconds (or why it failed) out.
type caller struct {
	in  io.WriteCloser
	out *bufio.Scanner
	why *strings.Builder // its stderr (lnk's, for a sandboxed one)
	// kernel and lnk are the run's kernel and its lnk sandbox run, and
	// home the run's HOME, for a sandboxed caller (0 and "" otherwise).
	kernel, lnk int
	home        string
}

func (c *caller) call(b testing.TB) time.Duration {
	if _, err := io.WriteString(c.in, "\n"); err != nil {
		b.Fatalf("the client: %v\n%s", err, c.why)
	}
	if !c.out.Scan() {
		b.Fatalf("the client ended: %v\n%s", c.out.Err(), c.why)
	}
	ns, err := strconv.ParseInt(c.out.Text(), 10, 64)
	if err != nil {
		b.Fatalf("the client: %s\n%s", c.out.Text(), c.why)
	}
	return time.Duration(ns)
}

// startCaller starts cmd, a client, and waits for its "ready".
func startCaller(b testing.TB, cmd *exec.Cmd) *caller {
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	c := &caller{in: in, out: bufio.NewScanner(out), why: &strings.Builder{}}
	cmd.Stderr = c.why
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	if !c.out.Scan() || c.out.Text() != "ready" {
		in.Close()
		cmd.Wait()
		b.Fatalf("the client is not ready: %q\n%s", c.out.Text(), c.why)
	}
	return c
}

// sandboxedCaller is an agent's run with the build whose lnk is lnkPath:
// a home of its own with the tool "test" (the tests' go-sdk server, or
// with tiny tinyServer) granted echo, its kernel started, and the client
// in the sandbox of `lnk sandbox run --agent` — or, onSocket, outside it
// on the run's proxy socket, the sandbox holding the run open.
func sandboxedCaller(b testing.TB, lnkPath string, tiny bool, want string, onSocket bool) *caller {
	home := testenv.Home(b)
	client := sandboxedClient(b, home)
	env := []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}
	lnk := func(args ...string) string {
		cmd := exec.Command(lnkPath, args...)
		cmd.Env, cmd.Dir = env, home
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s %v: %v\n%s", lnkPath, args, err, out)
		}
		return string(out)
	}
	if tiny {
		lnk("sandbox", "tool", "add", "test", "--env", "PATH=/usr/bin:/bin", "--", "/bin/sh", "-c", tinyServer)
	} else {
		lnk("sandbox", "tool", "add", "test", "--env", "LNK_TEST_MCP_SERVER=1", "--env", "PATH=/usr/bin:/bin", "--", client)
	}
	lnk("agent", "create", "bench")
	lnk("agent", "allow", "bench", "--read", filepath.Dir(client), "--command", client)
	lnk("agent", "allow", "bench", "--tool", "test", "--allow", "echo")
	// The owner's kernel runs already, as lnk kernel start or its
	// systemd unit leaves it.
	started := regexp.MustCompile(`pid ([0-9]+)`).FindStringSubmatch(lnk("kernel", "start"))
	b.Cleanup(func() { lnk("kernel", "stop") })
	kernel := 0
	if started != nil {
		kernel, _ = strconv.Atoi(started[1])
	}
	run := exec.Command(lnkPath, "sandbox", "run", "--agent", "bench", "--", client, "mcp-bench", want)
	if onSocket {
		run.Args = append(run.Args[:len(run.Args)-2], "mcp-bench-url")
	}
	run.Env, run.Dir = env, home
	run.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal: nothing asks on one
	c := startCaller(b, run)
	c.kernel, c.lnk, c.home = kernel, run.Process.Pid, home
	if !onSocket {
		return c
	}
	// The run's URL (the sandbox's client says it), and its proxy's
	// socket: the one under home.
	if !c.out.Scan() {
		b.Fatalf("the sandbox says no URL\n%s", c.why)
	}
	url := c.out.Text()
	socks, err := filepath.Glob(filepath.Join(home, ".lnk", "agents", ".net", "*", "proxy-*.sock"))
	if err != nil || len(socks) != 1 {
		b.Fatalf("the run's proxy socket: %v %v", socks, err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self, "mcp-bench", want, socks[0], url)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out := startCaller(b, cmd)
	out.kernel, out.lnk, out.home = c.kernel, c.lnk, c.home
	return out
}

// directCaller is the baseline: a client process of its own that runs the
// same server itself and calls it on stdio.
func directCaller(b testing.TB, tiny bool, want string) *caller {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self, "mcp-bench-direct", want, strconv.FormatBool(tiny))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	return startCaller(b, cmd)
}

// runBenchCaller is the benchmark's client in a sandbox (`mcp-bench WANT`):
// it opens a session at $LNK_TOOL_TEST as a harness does, says "ready",
// then for each line read makes one echo call and prints its time in
// nanoseconds, or why it failed (an answer lacking WANT). With SOCKET
// and URL after WANT it is the client outside the sandbox instead,
// reaching the proxy on its socket, with no relay between.
func runBenchCaller(args []string) int {
	url := os.Getenv("LNK_TOOL_TEST")
	tr := &http.Transport{Proxy: nil}
	if len(args) == 3 {
		sock := args[1]
		url = args[2]
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}
	}
	if url == "" || (len(args) != 1 && len(args) != 3) {
		fmt.Println("usage: mcp-bench WANT [SOCKET URL], with LNK_TOOL_TEST")
		return 2
	}
	hc := &http.Client{Transport: tr}
	post := func(sid, body string) (string, string, error) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(SessionHeader, sid)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", "", err
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return "", "", fmt.Errorf("status %d: %s", resp.StatusCode, got)
		}
		return resp.Header.Get(SessionHeader), string(got), err
	}
	sid, _, err := post("", initBody)
	if err == nil {
		_, _, err = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	if err != nil {
		fmt.Println("session: " + oneLine(err.Error()))
		return 1
	}
	return serveCalls(args[0], func() (string, error) { _, body, err := post(sid, echoCall); return body, err })
}

// runBenchDirect is the baseline's client (`mcp-bench-direct WANT TINY`):
// the same server run straight on stdio, called as runBenchCaller calls.
func runBenchDirect(args []string) int {
	if len(args) != 2 {
		fmt.Println("usage: mcp-bench-direct WANT TINY")
		return 2
	}
	self, _ := os.Executable()
	cmd := exec.Command(self)
	if args[1] == "true" {
		cmd = exec.Command("/bin/sh", "-c", tinyServer)
	}
	cmd.Env = []string{"LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin"}
	in, _ := cmd.StdinPipe()
	pipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Println("server: " + err.Error())
		return 1
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	out := bufio.NewReader(pipe)
	call := func(msg string) (string, error) {
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			return "", err
		}
		return out.ReadString('\n')
	}
	if _, err := call(initBody); err != nil {
		fmt.Println("session: " + err.Error())
		return 1
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return serveCalls(args[0], func() (string, error) { return call(echoCall) })
}

// runBenchURL is the sandbox's client when the benchmark calls from
// outside (`mcp-bench-url`): it says "ready" and $LNK_TOOL_TEST, and holds
// the run open until its stdin ends.
func runBenchURL() int {
	fmt.Println("ready")
	fmt.Println(os.Getenv("LNK_TOOL_TEST"))
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// serveCalls says "ready", then times one call for each line on stdin.
func serveCalls(want string, call func() (string, error)) int {
	fmt.Println("ready")
	orders := bufio.NewScanner(os.Stdin)
	for orders.Scan() {
		t0 := time.Now()
		body, err := call()
		took := time.Since(t0)
		if err != nil || !strings.Contains(body, want) {
			fmt.Printf("call: %v %s\n", err, oneLine(body))
			return 1
		}
		fmt.Println(took.Nanoseconds())
	}
	return 0
}
