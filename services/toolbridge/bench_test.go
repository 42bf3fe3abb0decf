package toolbridge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
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
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// benchRoute is a sandbox's path to its tools, less the relay inside the
// sandbox: a netbroker proxy whose mcp route dials a bridge started with
// Start, serving the tests' go-sdk server (or, with tiny, a minimal one).
type benchRoute struct {
	proxy string // the proxy's socket
	route string
	r     *Running
}

func newBenchRoute(b *testing.B, grants map[string]caps.Tool, tiny bool) *benchRoute {
	home := b.TempDir()
	os.Chmod(home, 0o700)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	mode := "LNK_TEST_MCP_SERVER"
	if tiny {
		mode = "LNK_TEST_MCP_TINY"
	}
	st := tooldef.Store{Home: home}
	d := &tooldef.Definition{Name: "test", Command: []string{self}, Env: map[string]*secret.Value{}}
	d.Env[mode], _ = secret.FromString("1")
	d.Env["PATH"], _ = secret.FromString("/usr/bin:/bin")
	if err := st.Save(d); err != nil {
		b.Fatal(err)
	}
	run, err := Start(home, SandboxName("bench"), &Bridge{Grants: grants, Defs: st})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(run.Close)
	rules, err := netbroker.RulesFrom(&caps.Compiled{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := netbroker.New(netbroker.Config{Rules: rules, Own: map[netip.Addr]bool{}, Log: func(netbroker.Event) {}, MaxConns: 4096,
		ToolBridge: func() (net.Conn, error) { return net.Dial("unix", run.Socket) }})
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(home, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(ln)
	b.Cleanup(func() { p.Close() })
	return &benchRoute{proxy: sock, route: run.Route() + "test", r: run}
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

func (br *benchRoute) session(b *testing.B) string {
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

func newDirect(b *testing.B) *direct {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = []string{"LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin"}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	d := &direct{cmd: cmd, in: in, out: bufio.NewReader(out)}
	d.call(b, initBody)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return d
}

func (d *direct) call(b *testing.B, msg string) string {
	io.WriteString(d.in, msg+"\n")
	line, err := d.out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return line
}

func p50(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// A tools/call through the proxy's route and the bridge, and the same
// call to the same server straight on stdio, alternating, each round
// timed: p50 of both, and what the route adds.
func BenchmarkToolsCallThroughRouteVsDirect(b *testing.B) {
	br := newBenchRoute(b, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, false)
	sid := br.session(b)
	d := newDirect(b)
	var link, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, body, err := br.post(sid, echoCall); err != nil || !strings.Contains(body, "bench") {
			b.Fatalf("%v %s", err, body)
		}
		t1 := time.Now()
		if line := d.call(b, echoCall); !strings.Contains(line, "bench") {
			b.Fatal(line)
		}
		link, base = append(link, t1.Sub(t0)), append(base, time.Since(t1))
	}
	l, s := p50(link), p50(base)
	b.ReportMetric(float64(l.Nanoseconds()), "link-p50-ns")
	b.ReportMetric(float64(s.Nanoseconds()), "base-p50-ns")
	b.ReportMetric(float64((l - s).Microseconds()), "added-p50-us")
	b.ReportMetric(float64(l)/float64(s), "x-baseline")
}

// Calls a second through the route across 8 sessions at once, beside the
// same 8 servers called straight on stdio at once.
func BenchmarkCallsPerSecondAcross8Sessions(b *testing.B) {
	br := newBenchRoute(b, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, false)
	sids := make([]string, 8)
	directs := make([]*direct, 8)
	for i := range sids {
		sids[i], directs[i] = br.session(b), newDirect(b)
	}
	rate := func(call func(i int)) float64 {
		var wg sync.WaitGroup
		start := time.Now()
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := i; n < b.N; n += 8 {
					call(i)
				}
			}()
		}
		wg.Wait()
		return float64(b.N) / time.Since(start).Seconds()
	}
	b.ResetTimer()
	link := rate(func(i int) {
		if _, _, err := br.post(sids[i], echoCall); err != nil {
			b.Error(err)
		}
	})
	base := rate(func(i int) { directs[i].call(b, echoCall) })
	b.ReportMetric(link, "link-calls/s")
	b.ReportMetric(base, "base-calls/s")
	b.ReportMetric(link/base, "x-baseline")
}

// 10,000 sessions opened and closed (a minimal stdio server each): the
// bridge's goroutines and open fds before and after.
func BenchmarkSessionsOpenedAndClosed(b *testing.B) {
	br := newBenchRoute(b, map[string]caps.Tool{"test": {AskNone: true}}, true)
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
	for range b.N {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				sid := br.session(b)
				br.r.Bridge.Terminate("test", sid)
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	deadline := time.Now().Add(10 * time.Second)
	g1, f1 := count()
	for (g1 > g0 || f1 > f0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // connections' goroutines finish after their answer
		g1, f1 = count()
	}
	b.ReportMetric(float64(g0), "goroutines-before")
	b.ReportMetric(float64(g1), "goroutines-after")
	b.ReportMetric(float64(f0), "fds-before")
	b.ReportMetric(float64(f1), "fds-after")
	if live := br.r.Bridge.Sessions(); live != 0 {
		b.Errorf("%d sessions left", live)
	}
}

// runTinyServer is a minimal stdio MCP server (LNK_TEST_MCP_TINY=1): it
// answers every request with an empty result, so a session's cost is the
// bridge's and a process start's.
func runTinyServer() {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		i := bytes.Index(line, []byte(`"id":`))
		if i < 0 {
			continue
		}
		id := line[i+5:]
		if j := bytes.IndexAny(id, ",}"); j > 0 {
			id = id[:j]
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"tiny","version":"1"}}}`+"\n", id)
	}
}
