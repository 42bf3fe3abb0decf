package toolbridge

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// benchRoute is a sandbox's path to its tools, less the relay inside the
// sandbox: a real lnk-netbroker whose mcp route passes its connections to
// a bridge started with Start (in this process, as in lnk), serving the
// tests' go-sdk server (or, with tiny, tinyServer).
type benchRoute struct {
	proxy string // the proxy's socket, where post sends
	route string
	r     *Running
}

func newBenchRoute(b testing.TB, grants map[string]caps.Tool, tiny bool, set Settings) *benchRoute {
	home := testenv.Home(b) // short: the sockets' paths must fit
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	st := tooldef.Store{Home: home}
	d := &tooldef.Definition{Name: "test", Command: []string{self}, Env: map[string]*secret.Value{}}
	d.Env["LNK_TEST_MCP_SERVER"], _ = secret.FromString("1")
	if tiny {
		d.Command = []string{"/bin/sh", "-c", tinyServer}
		d.Env = map[string]*secret.Value{}
	}
	d.Env["PATH"], _ = secret.FromString("/usr/bin:/bin")
	if err := st.Save(d); err != nil {
		b.Fatal(err)
	}
	lnk, err := os.Open(filepath.Join(home, ".lnk"))
	if err != nil {
		b.Fatal(err)
	}
	dir, err := audit.OpenDir(lnk, true)
	lnk.Close()
	if err != nil {
		b.Fatal(err)
	}
	log, err := audit.Open(dir, audit.Options{}) // each request a line, as lnk sandbox run writes them
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	// AdaptProcs as lnk sets it: this process then runs on one P while
	// one or two calls are open, the benchmark's client with it.
	all := runtime.GOMAXPROCS(0)
	b.Cleanup(func() { runtime.GOMAXPROCS(all) })
	run, err := Start(home, SandboxName("bench"), &Bridge{Grants: grants, Defs: st, Settings: set, Log: AuditLog(log, "bench"), AdaptProcs: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(run.Close)
	ch, err := run.ProxyChannel()
	if err != nil {
		b.Fatal(err)
	}
	sock := benchProxy(b, home, ch)
	return &benchRoute{proxy: sock, route: run.Route() + "test", r: run}
}

// benchProxy starts a sandbox's proxy as lnk sandbox run does: the real
// lnk-netbroker, in a process of its own, its socket under home, its mcp
// route passing each connection on the channel ch (the proxy's end,
// closed once the proxy has it). It returns the proxy's socket.
func benchProxy(b testing.TB, home string, ch *os.File) string {
	// The proxy's PR_SET_PDEATHSIG is its starting thread's: this one,
	// for as long as the benchmark runs (sandbox.StartProxy).
	runtime.LockOSThread()
	c := &caps.Compiled{Home: home, Tools: map[string]caps.Tool{"test": {}}}
	// Its log, a line per request, read as lnk reads it: from a pipe.
	logR, logW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, logR)
	p, err := sandbox.StartProxy(c, testenv.Bin(b, "lnk-netbroker"), false, logW, &sandbox.ToolBridge{Channel: ch}, nil)
	logW.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop() })
	return p.Socket
}

// post sends one message on a connection of its own, as a client in the
// sandbox does through its relay.
func (br *benchRoute) post(sid, body string) (string, string, error) {
	c, err := net.Dial("unix", br.proxy)
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	req, _ := http.NewRequest("POST", "http://127.0.0.1:3128"+br.route, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set(SessionHeader, sid)
	}
	if err := req.Write(c); err != nil {
		return "", "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return "", "", err
	}
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return "", "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return resp.Header.Get(SessionHeader), string(b), err
}

func (br *benchRoute) session(b testing.TB) string {
	sid, _, err := br.post("", initBody)
	if err == nil {
		_, _, err = br.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	if err != nil {
		b.Fatal(err)
	}
	return sid
}

const echoCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"bench"}}}`

// direct is the same server run straight on stdio, the baseline.
type direct struct {
	cmd *exec.Cmd
	in  io.Writer
	out *bufio.Reader
}

func newDirect(b *testing.B, tiny bool) *direct {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	if tiny {
		cmd = exec.Command("/bin/sh", "-c", tinyServer)
	}
	cmd.Env = []string{"LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin"}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	d := &direct{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if _, err := d.call(initBody); err != nil {
		b.Fatal(err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return d
}

func (d *direct) call(msg string) (string, error) {
	io.WriteString(d.in, msg+"\n")
	return d.out.ReadString('\n')
}

// servers are what the call benchmarks run both ways: the tests' go-sdk
// server, and tinyServer, whose own cost is small, so the bridge's shows.
var servers = []struct {
	name string
	tiny bool
	want string // in every answer
}{{"go-sdk", false, "bench"}, {"tiny", true, `"id":7`}}

func p50(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// A tools/call through the proxy's route and the bridge, and the same
// call to the same server straight on stdio, alternating, each round
// timed: p50 of both, and what the route adds.
func BenchmarkToolsCallThroughRouteVsDirect(b *testing.B) {
	for _, sv := range servers {
		b.Run("server="+sv.name, func(b *testing.B) {
			br := newBenchRoute(b, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, sv.tiny, Settings{})
			sid := br.session(b)
			d := newDirect(b, sv.tiny)
			var link, base []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, body, err := br.post(sid, echoCall); err != nil || !strings.Contains(body, sv.want) {
					b.Fatalf("%v %s", err, body)
				}
				t1 := time.Now()
				if line, err := d.call(echoCall); err != nil || !strings.Contains(line, sv.want) {
					b.Fatalf("%v %s", err, line)
				}
				link, base = append(link, t1.Sub(t0)), append(base, time.Since(t1))
			}
			l, s := p50(link), p50(base)
			b.ReportMetric(float64(l.Nanoseconds()), "link-p50-ns")
			b.ReportMetric(float64(s.Nanoseconds()), "base-p50-ns")
			b.ReportMetric(float64((l - s).Microseconds()), "added-p50-us")
			b.ReportMetric(float64(l)/float64(s), "x-baseline")
		})
	}
}

// Calls a second through the route across 8 sessions at once, beside the
// same 8 servers called straight on stdio at once: rounds of 8×16 calls
// one way, then the other, so both see the same load.
func BenchmarkCallsPerSecondAcross8Sessions(b *testing.B) {
	for _, sv := range servers {
		b.Run("server="+sv.name, func(b *testing.B) {
			br := newBenchRoute(b, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, sv.tiny, Settings{})
			sids := make([]string, 8)
			directs := make([]*direct, 8)
			for i := range sids {
				sids[i], directs[i] = br.session(b), newDirect(b, sv.tiny)
			}
			round := func(calls int, call func(i int) error) time.Duration {
				var wg sync.WaitGroup
				start := time.Now()
				for i := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for n := i; n < calls; n += 8 {
							if err := call(i); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				return time.Since(start)
			}
			viaLink := func(i int) error { _, _, err := br.post(sids[i], echoCall); return err }
			viaStdio := func(i int) error { _, err := directs[i].call(echoCall); return err }
			var tLink, tBase time.Duration
			b.ResetTimer()
			for done := 0; done < b.N; done += 128 {
				calls := min(128, b.N-done)
				tLink += round(calls, viaLink)
				tBase += round(calls, viaStdio)
			}
			link, base := float64(b.N)/tLink.Seconds(), float64(b.N)/tBase.Seconds()
			b.ReportMetric(link, "link-calls/s")
			b.ReportMetric(base, "base-calls/s")
			b.ReportMetric(link/base, "x-baseline")
		})
	}
}

// 10,000 sessions opened and closed on the bridge's socket, 8 at a time (and so 8 starting at
// once: the limits are the bridge's settings, raised here so the run is
// short), each with tinyServer: the bridge's goroutines and open fds
// before and after.
func BenchmarkSessionsOpenedAndClosed(b *testing.B) {
	br := newBenchRoute(b, map[string]caps.Tool{"test": {AskNone: true}}, true, Settings{Sessions: 8, Starts: 8})
	br.proxy = br.r.Socket // the bridge's own socket: what must not grow is the bridge
	const n = 10000
	count := func() (int, int) {
		runtime.GC()
		ents, _ := os.ReadDir("/proc/self/fd")
		return runtime.NumGoroutine(), len(ents)
	}
	warm := br.session(b)
	br.r.Bridge.Terminate("test", warm)
	g0, f0 := count()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 8 {
					sid := br.session(b)
					br.r.Bridge.Terminate("test", sid)
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	perSec := float64(b.N*n) / time.Since(start).Seconds()
	deadline := time.Now().Add(10 * time.Second)
	g1, f1 := count()
	for (g1 > g0 || f1 > f0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // connections' goroutines finish after their answer
		g1, f1 = count()
	}
	b.ReportMetric(perSec, "sessions/s")
	b.ReportMetric(float64(g0), "goroutines-before")
	b.ReportMetric(float64(g1), "goroutines-after")
	b.ReportMetric(float64(f0), "fds-before")
	b.ReportMetric(float64(f1), "fds-after")
	if g1 > g0 || f1 > f0 {
		b.Errorf("grew after %d sessions: goroutines %d → %d, fds %d → %d", b.N*n, g0, g1, f0, f1)
	}
	if live := br.r.Bridge.Sessions(); live != 0 {
		b.Errorf("%d sessions left", live)
	}
}

// tinyServer is the smallest stdio MCP server, a shell's loop: it answers
// every request with an empty server's result, so a session's cost is the
// bridge's and a process start's (a fraction of the CPU the tests' go-sdk
// server takes to start, and one thread).
const tinyServer = `while read -r l; do
case $l in *'"id":'*)
id=${l#*'"id":'}; id=${id%%[,\}]*}
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"tiny","version":"1"}}}\n' "$id";;
esac
done`
