package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/toolbridge"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// benchText is a text page of about 100 KB (an article's HTML served as
// text/plain, so lnk-web converts nothing and carries it all back).
func benchText() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>A long article</title></head><body><main>")
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2><p>Some <b>text</b> with <a href=\"/p/%d\">a link</a> and <code>code</code>, then more words to read in a paragraph of an ordinary length.</p><ul><li>one</li><li>two</li></ul>\n", i, i)
	}
	b.WriteString("</main></body></html>")
	return b.String()
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// harnessRoute is the harness's real way to a tool: the sandbox's proxy
// (the real lnk-netbroker, its relay listener on loopback TCP handed to
// it as lnk-init hands it) whose tool route passes each connection to a
// tool bridge (toolbridge.Start, in this process as lnk sandbox run runs
// it, its audit log written: a line a call), which runs the tool's
// server (lnk-web) on stdio.
type harnessRoute struct {
	proxy string // http://127.0.0.1:<relay port>: $HTTP_PROXY
	url   string // the tool's URL, as $LNK_TOOL_WEB says it
}

func newHarnessRoute(b testing.TB, web string, events func(toolbridge.Event)) *harnessRoute {
	home := testenv.Home(b)
	st := tooldef.Store{Home: home}
	d := &tooldef.Definition{Name: "web", Command: []string{web, "--private-host", "127.0.0.1"}, Env: map[string]*secret.Value{}}
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
	log, err := audit.Open(dir, audit.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	// AdaptProcs off: lnk-toolbridge narrows its own process to one P,
	// but here the bridge shares this process with the harness's client,
	// which runs in a process of its own, on every core.
	audited := toolbridge.AuditLog(log, "bench")
	run, err := toolbridge.Start(home, toolbridge.SandboxName("bench"), &toolbridge.Bridge{
		Grants: map[string]caps.Tool{"web": {Allow: []string{"fetch"}}}, Defs: st,
		Log: func(e toolbridge.Event) {
			audited(e)
			if events != nil {
				events(e)
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(run.Close)
	ch, err := run.ProxyChannel()
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread() // the proxy's PR_SET_PDEATHSIG is this thread's
	logR, logW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, logR)
	c := &caps.Compiled{Home: home, Tools: map[string]caps.Tool{"web": {}}}
	p, err := sandbox.StartProxy(c, testenv.Bin(b, "lnk-netbroker"), false, logW, &sandbox.ToolBridge{Channel: ch}, nil)
	logW.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		b.Fatal(err)
	}
	if err := connpass.PassListener(int(p.Relay.Fd()), int(lf.Fd())); err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	lf.Close()
	p.Relay.Close()
	return &harnessRoute{proxy: "http://" + addr, url: "http://" + addr + run.Route() + "web"}
}

// set is the harness's tools as its sandbox has them: web, reached
// through $HTTP_PROXY.
func (hr *harnessRoute) set(b testing.TB, logf func(string, ...any)) *Set {
	h, err := ProxyClient(func(k string) string {
		switch k {
		case "HTTP_PROXY":
			return hr.proxy
		case "LNK_SANDBOX":
			return "1"
		}
		return ""
	})
	if err != nil {
		b.Fatal(err)
	}
	set, err := New(Config{HTTP: h, Logf: logf, Tools: []Tool{{Name: "web", URL: hr.url}}})
	if err != nil {
		b.Fatal(err)
	}
	return set
}

// stdioWeb is lnk-web on stdio, asked by a minimal client: a request line
// written, the answer's line read whole.
type stdioWeb struct {
	in  io.Writer
	out *bufio.Reader
}

func newStdioWeb(b *testing.B, web string) *stdioWeb {
	cmd := exec.Command(web, "--private-host", "127.0.0.1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	s := &stdioWeb{in: in, out: bufio.NewReaderSize(out, 256<<10)}
	s.line(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return s
}

func (s *stdioWeb) line(msg string) []byte {
	io.WriteString(s.in, msg+"\n")
	l, _ := s.out.ReadSlice('\n')
	if len(l) == 0 {
		var all []byte
		for {
			part, err := s.out.ReadSlice('\n')
			all = append(all, part...)
			if err != bufio.ErrBufferFull {
				return all
			}
		}
	}
	return l
}

// BenchmarkHarnessToolCall100KB: one fetch of a 100 KB text page (no
// conversion: the page's 100 KB carried back) by the harness's own call
// (Turn.Call: the go-sdk client over streamable HTTP, through the
// sandbox's proxy, its tool route and the tool bridge, to lnk-web on
// stdio), beside, in the same run, each op every part in turn:
//
//   - turn-p50-ns, turn-x-stdio: a turn's first call: Begin (the list
//     kept from before), the session opened, the call, End;
//   - link-p50-ns: the harness's call in a session held open, its answer
//     made text;
//   - route-p50-ns: the same fetch through the same proxy and bridge by a
//     minimal HTTP client (the request written, the answer read whole,
//     one json.Unmarshal): Link's route without the go-sdk client;
//   - gosdk-stdio-p50-ns: the go-sdk client calling a second lnk-web over
//     stdio (services/web's gosdk-ns/op);
//   - stdio-p50-ns, the baseline: a minimal client calling a third
//     lnk-web over stdio (the line written, the answer line read, one
//     json.Unmarshal);
//   - link-cpu-p50-ns, route-cpu-p50-ns: this process's CPU time in the
//     harness's call and in the minimal client's (its threads' time on a
//     CPU, getrusage): the bridge's and the client's work, whatever else
//     shares the cores, where wall time on a loaded machine is mostly
//     waiting for one;
//   - x-stdio: link-p50 against it; x-gosdk-stdio: link-p50 against the
//     go-sdk over stdio (what the route adds to the agent's own client);
//     route-x-stdio: route-p50 against it.
func BenchmarkHarnessToolCall100KB(b *testing.B) {
	page := benchText()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(rw, page)
	}))
	defer srv.Close()
	web := testenv.Bin(b, "lnk-web")
	hr := newHarnessRoute(b, web, nil)
	set := hr.set(b, func(string, ...any) {})
	defer set.Close()
	ctx := context.Background()
	tt := set.Begin(ctx, Scope{Thread: "bench"})
	defer tt.End()
	args := json.RawMessage(`{"url":"` + srv.URL + `/page"}`)
	linkCall := func() {
		r := tt.Call(ctx, model.ToolCall{ID: "1", Name: "web__fetch", Arguments: args})
		if r.IsError || len(r.Text) < 100<<10 {
			b.Fatalf("the harness's call: %+v", r)
		}
	}

	// A turn's first call: its session opened (initialize, initialized),
	// the call, and its end (the DELETE, sent as End returns; waited for
	// untimed).
	turnCall := func() {
		t := set.Begin(ctx, Scope{Thread: "bench"})
		r := t.Call(ctx, model.ToolCall{ID: "1", Name: "web__fetch", Arguments: args})
		t.End()
		if r.IsError || len(r.Text) < 100<<10 {
			b.Fatalf("a turn's call: %+v", r)
		}
	}

	// A minimal HTTP client's session through the same route.
	rc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(b, hr.proxy))}}
	post := func(sid, body string) (string, []byte) {
		req, _ := http.NewRequest("POST", hr.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := rc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body2, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode/100 != 2 {
			b.Fatalf("%v %d %s", err, resp.StatusCode, body2)
		}
		return resp.Header.Get("Mcp-Session-Id"), body2
	}
	sid, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	callMsg := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":` + string(args) + `}}`
	var decoded struct {
		Result mcp.CallToolResult `json:"result"`
	}
	routeCall := func() {
		_, body := post(sid, callMsg)
		if err := json.Unmarshal(body, &decoded); err != nil || decoded.Result.IsError {
			b.Fatalf("%v %s", err, body[:min(len(body), 200)])
		}
	}

	// The go-sdk client over stdio.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: exec.Command(web, "--private-host", "127.0.0.1")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var argMap map[string]any
	json.Unmarshal(args, &argMap)
	sdkCall := func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: argMap})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}

	// The baseline.
	sw := newStdioWeb(b, web)
	stdioCall := func() {
		if err := json.Unmarshal(sw.line(callMsg), &decoded); err != nil || decoded.Result.IsError {
			b.Fatal(err)
		}
	}

	for i := 0; i < 5; i++ {
		turnCall()
		set.ending.Wait()
		linkCall()
		routeCall()
		sdkCall()
		stdioCall()
	}
	runtime.GC()
	var turn, link, route, sdk, base, linkCPU, routeCPU []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tt0 := time.Now()
		turnCall()
		turn = append(turn, time.Since(tt0))
		set.ending.Wait()
		c0 := selfCPU(b)
		t0 := time.Now()
		linkCall()
		t1 := time.Now()
		c1 := selfCPU(b)
		t1b := time.Now()
		routeCall()
		t2 := time.Now()
		c2 := selfCPU(b)
		t2b := time.Now()
		sdkCall()
		t3 := time.Now()
		stdioCall()
		t4 := time.Now()
		link, route = append(link, t1.Sub(t0)), append(route, t2.Sub(t1b))
		sdk, base = append(sdk, t3.Sub(t2b)), append(base, t4.Sub(t3))
		linkCPU, routeCPU = append(linkCPU, c1-c0), append(routeCPU, c2-c1)
	}
	b.StopTimer()
	l, r, g, s := float64(p50(link)), float64(p50(route)), float64(p50(sdk)), float64(p50(base))
	b.ReportMetric(float64(p50(linkCPU)), "link-cpu-p50-ns")
	b.ReportMetric(float64(p50(routeCPU)), "route-cpu-p50-ns")
	b.ReportMetric(float64(p50(turn)), "turn-p50-ns")
	b.ReportMetric(float64(p50(turn))/s, "turn-x-stdio")
	b.ReportMetric(l, "link-p50-ns")
	b.ReportMetric(r, "route-p50-ns")
	b.ReportMetric(g, "gosdk-stdio-p50-ns")
	b.ReportMetric(s, "stdio-p50-ns")
	b.ReportMetric(l/s, "x-stdio")
	b.ReportMetric(l/g, "x-gosdk-stdio")
	b.ReportMetric(r/s, "route-x-stdio")
}

// selfCPU is this process's CPU time so far, user and system.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func mustURL(b testing.TB, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return u
}
