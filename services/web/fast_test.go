package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcpstdio"
	"lnk.dev/lnk/internal/stdpipe"
)

// sdkOnly is a transport Serve does not know as Link's own: every
// message goes to the go-sdk.
type sdkOnly struct{ mcp.Transport }

// servePipes runs tool's Serve on Link's stdio transport over two pipes
// (through sdkOnly unless fast) and returns the client's ends and the
// count of tools/call requests that reached the go-sdk server.
func servePipes(t *testing.T, tool *Web, fast bool) (in *os.File, out *bufio.Reader, sdkCalls *atomic.Int32) {
	t.Helper()
	inChild, inP, err := stdpipe.ForChild(false)
	if err != nil {
		t.Fatal(err)
	}
	outChild, outP, err := stdpipe.ForChild(true)
	if err != nil {
		t.Fatal(err)
	}
	var tr mcp.Transport = mcpstdio.New(inP, outP)
	if _, ok := tr.(*mcpstdio.Transport); !ok {
		t.Fatalf("pipes got %T, not Link's transport", tr)
	}
	if !fast {
		tr = sdkOnly{tr}
	}
	sdkCalls = &atomic.Int32{}
	m := tool.MCP()
	m.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				sdkCalls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	done := make(chan struct{})
	go func() { tool.serve(context.Background(), tr, m); close(done) }()
	t.Cleanup(func() {
		inChild.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not end with its client")
		}
		outChild.Close()
	})
	return inChild, bufio.NewReader(outChild), sdkCalls
}

const (
	initLine        = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func callLine(id, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
}

// fenceTag is an answer's fence, new for each answer.
var fenceTag = regexp.MustCompile(`(web page|web search results) [0-9a-f]{16}>>>`)

// TestFastFetchIsTheGoSDKs: the same lines, sent to Serve on Link's
// transport (a plain call on the fast path) and through a transport it
// does not know (the go-sdk answering every one), are answered with the
// same bytes but the fence's tag: pages, refusals, bad arguments, and
// every near miss the fast path leaves to the go-sdk. The plain calls
// never reach the go-sdk server; the near misses do.
func TestFastFetchIsTheGoSDKs(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	w.mux.HandleFunc("/text", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "<one> & \"two\"\n\u2028\tthree `four` [five](http://x/)\n")
	})
	tool, _ := w.tool(Config{})
	var ins [2]*os.File
	var outs [2]*bufio.Reader
	var sdk [2]*atomic.Int32
	ins[0], outs[0], sdk[0] = servePipes(t, tool, true)
	ins[1], outs[1], sdk[1] = servePipes(t, tool, false)

	page := `{"name":"fetch","arguments":{"url":"http://pub.example.com/page"}}`
	plain := []string{
		callLine("3", page),
		callLine(`"s-4"`, `{"name":"fetch","arguments":{"url":"http://pub.example.com/text"}}`),
		callLine("-5", `{"arguments":{"url":"https://pub.example.com/page"},"name":"fetch"}`),
		callLine(" 6 ", ` { "name" : "fetch" , "arguments" : { "url" : "http://pub.example.com/page" } } `),
		callLine("7", `{"name":"fetch","arguments":{"url":"http://10.9.0.2/page"}}`),
		callLine("8", `{"name":"fetch","arguments":{"url":1}}`),
		callLine("9", `{"name":"fetch","arguments":{"url":"http://pub.example.com/page","x":1}}`),
		callLine("10", `{"name":"fetch"}`),
		callLine("11", `{"name":"search","arguments":{"query":"q"}}`),
	}
	nearMisses := []string{
		callLine("2", page), // before notifications/initialized
		callLine(`"a\u0041"`, page),
		callLine("9007199254740993", page),
		callLine("14.0", page),
		callLine("15", `{"name":"fetc\u0068","arguments":{"url":"http://pub.example.com/page"}}`),
		callLine("16", `{"name":"nope","arguments":{}}`),
		callLine("17", `{"name":"fetch","arguments":{"url":"http://pub.example.com/page"},"_meta":{"progressToken":"p"}}`),
		callLine("18", `{"Name":"fetch","arguments":{"url":"http://pub.example.com/page"}}`),
		`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":` + page + `,"extra":true}`,
	}
	lines := append([]string{initLine, nearMisses[0], initializedLine}, plain...)
	lines = append(lines, nearMisses[1:]...)
	lines = append(lines, `{"jsonrpc":"2.0","id":26,"method":"ping"}`, `{"jsonrpc":"2.0","id":27,"method":"tools/list"}`, callLine("28", page))
	for _, line := range lines {
		var got [2]string
		for i := range 2 {
			if _, err := ins[i].WriteString(line + "\n"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(line, `"id"`) {
				continue // a notification: no answer
			}
			b, err := outs[i].ReadString('\n')
			if err != nil {
				t.Fatalf("%s: no answer: %v", line, err)
			}
			got[i] = fenceTag.ReplaceAllString(b, "$1 TAG>>>")
		}
		if got[0] != got[1] {
			t.Errorf("%s:\nwith the fast path: %s\nthe go-sdk's:       %s", line, got[0], got[1])
		}
	}
	if sdk[1].Load() != int32(len(plain)+len(nearMisses)+1) {
		t.Fatalf("the go-sdk alone answered %d calls, want %d", sdk[1].Load(), len(plain)+len(nearMisses)+1)
	}
	if got, want := sdk[0].Load(), int32(len(nearMisses)); got != want {
		t.Errorf("with the fast path %d calls reached the go-sdk server, want %d (the near misses)", got, want)
	}
}

// TestSeventeenthCallWaitsFastPath: TestSeventeenthCallWaits over Link's
// own transport, where plain calls take the fast path and the rest go to
// the go-sdk: 17 calls to pages that hold, every other one a near miss
// (with _meta), are sent at once; 16 reach the host, the 17th is not read
// until one is answered, then it is, and all 17 are answered.
func TestSeventeenthCallWaitsFastPath(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	release := make(chan struct{})
	var arrived atomic.Int32
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "held")
	})
	tool, _ := w.tool(Config{})
	in, out, sdkCalls := servePipes(t, tool, true)
	if _, err := in.WriteString(initLine + "\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	lines.WriteString(initializedLine + "\n")
	for id := 1; id <= MaxCalls+1; id++ {
		meta := ""
		if id%2 == 0 {
			meta = `,"_meta":{}` // the go-sdk's
		}
		fmt.Fprintf(&lines, "%s\n", callLine(fmt.Sprint(id), `{"name":"fetch","arguments":{"url":"http://pub.example.com/hold"}`+meta+`}`))
	}
	var answered atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			b, err := out.ReadString('\n')
			if err != nil {
				return
			}
			if !strings.Contains(b, "held") || strings.Contains(b, `"isError":true`) {
				t.Errorf("an answer: %s", b)
			}
			if answered.Add(1) == MaxCalls+1 {
				return
			}
		}
	}()
	go in.WriteString(lines.String()) // the 17th stays in the pipe
	waitFor(t, func() bool { return arrived.Load() == MaxCalls }, "16 calls at the host")
	time.Sleep(300 * time.Millisecond)
	if arrived.Load() != MaxCalls {
		t.Fatalf("%d calls at the host with 16 unanswered, want 16", arrived.Load())
	}
	if got := sdkCalls.Load(); got != MaxCalls/2 {
		t.Fatalf("%d calls reached the go-sdk, want %d: the fast path did not take the others", got, MaxCalls/2)
	}
	release <- struct{}{} // one answered: the 17th is read
	waitFor(t, func() bool { return arrived.Load() == MaxCalls+1 }, "the 17th call read once one was answered")
	close(release)
	wg.Wait()
	if answered.Load() != MaxCalls+1 {
		t.Fatalf("%d calls answered, want 17", answered.Load())
	}
}

// TestCancelledCallsFreeTheirPlaceFastPath: TestCancelledCallsFreeTheirPlace
// over Link's own transport, the calls on the fast path: after 16 calls
// to a page that holds, each cancelled (notifications/cancelled) once it
// is at the host, a 17th is still read and answered.
func TestCancelledCallsFreeTheirPlaceFastPath(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	var arrived atomic.Int32
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
	})
	w.mux.HandleFunc("/quick", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "quick")
	})
	tool, _ := w.tool(Config{})
	in, out, sdkCalls := servePipes(t, tool, true)
	send := func(line string) {
		if _, err := in.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(initLine)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	send(initializedLine)
	for id := 1; id <= MaxCalls; id++ {
		send(callLine(fmt.Sprint(id), `{"name":"fetch","arguments":{"url":"http://pub.example.com/hold"}}`))
		waitFor(t, func() bool { return arrived.Load() == int32(id) }, "the held call at the host")
		send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id))
		b, err := out.ReadString('\n')
		if err != nil || !strings.Contains(b, fmt.Sprintf(`"id":%d,`, id)) {
			t.Fatalf("the cancelled call %d answered: %q %v", id, b, err)
		}
	}
	send(callLine("99", `{"name":"fetch","arguments":{"url":"http://pub.example.com/quick"}}`))
	b, err := out.ReadString('\n')
	if err != nil || !strings.Contains(b, `"id":99,`) || !strings.Contains(b, "quick") || strings.Contains(b, `"isError":true`) {
		t.Fatalf("a call after 16 cancelled ones: %q %v", b, err)
	}
	if n := sdkCalls.Load(); n != 0 {
		t.Fatalf("%d calls reached the go-sdk: not the fast path", n)
	}
}

// TestOneIDTwiceHoldsTwoPlacesFastPath: TestOneIDTwiceHoldsTwoPlaces
// over Link's own transport: 16 held calls on the fast path, then 20
// more under ids already open (plain, and with _meta for the go-sdk),
// then 14 under new ids: at most 16 are ever at the host at once.
func TestOneIDTwiceHoldsTwoPlacesFastPath(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	var arrived atomic.Int32
	release := make(chan struct{})
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	tool, _ := w.tool(Config{})
	in, out, _ := servePipes(t, tool, true)
	go io.Copy(io.Discard, out)
	send := func(s string) bool { _, err := in.WriteString(s + "\n"); return err == nil }
	send(initLine)
	send(initializedLine)
	call := func(id int, meta string) bool {
		return send(callLine(fmt.Sprint(id), `{"name":"fetch","arguments":{"url":"http://pub.example.com/hold"}`+meta+`}`))
	}
	for id := 1; id <= MaxCalls; id++ {
		call(id, "")
	}
	waitFor(t, func() bool { return arrived.Load() == MaxCalls }, "16 held calls at the host")
	go func() {
		for i := 0; i < 20; i++ {
			meta := ""
			if i%2 == 1 {
				meta = `,"_meta":{}`
			}
			if !call(1+i%MaxCalls, meta) {
				return
			}
		}
		for id := MaxCalls + 1; id <= 30; id++ {
			if !call(id, "") {
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if n := arrived.Load(); n != MaxCalls {
		t.Fatalf("%d calls at the host at once, want %d", n, MaxCalls)
	}
	close(release)
}

// TestFastCallsEndWithTheSession: a fetch on the fast path still running
// when the client closes its side is cancelled, as the go-sdk cancels its
// own: the host sees its request end, long before the call's 30 s, and
// Serve returns.
func TestFastCallsEndWithTheSession(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	var arrived, ended atomic.Int32
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
		ended.Add(1)
	})
	w.mux.HandleFunc("/quick", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "quick")
	})
	tool, _ := w.tool(Config{})
	in, out, sdkCalls := servePipes(t, tool, true)
	send := func(line string) {
		if _, err := in.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(initLine)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	send(initializedLine)
	// The positive control: a call on the fast path is answered.
	send(callLine("1", `{"name":"fetch","arguments":{"url":"http://pub.example.com/quick"}}`))
	if b, err := out.ReadString('\n'); err != nil || !strings.Contains(b, "quick") {
		t.Fatalf("a quick call: %q %v", b, err)
	}
	send(callLine("2", `{"name":"fetch","arguments":{"url":"http://pub.example.com/hold"}}`))
	waitFor(t, func() bool { return arrived.Load() == 1 }, "the held call at the host")
	in.Close()
	waitFor(t, func() bool { return ended.Load() == 1 }, "the held call cancelled once the client closed its side")
	if n := sdkCalls.Load(); n != 0 {
		t.Fatalf("%d calls reached the go-sdk: not the fast path", n)
	}
}
