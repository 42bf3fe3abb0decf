package toolbridge

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// farServer is a go-sdk streamable-HTTP server on loopback whose
// sessions can be forgotten at once (forget: a fresh handler, as a
// server restarted, or one whose sessions expired), and which records
// the status it gave each DELETE of a session.
type farServer struct {
	url     string
	handler atomic.Pointer[http.Handler]
	mu      sync.Mutex
	deletes []int
	// held, if set, hears of each DELETE, which waits then for release.
	held, release chan struct{}
}

func newFarServer(t *testing.T) *farServer {
	f := &farServer{}
	f.forget()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			(*f.handler.Load()).ServeHTTP(w, r)
			return
		}
		if f.held != nil {
			f.held <- struct{}{}
			<-f.release
		}
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		(*f.handler.Load()).ServeHTTP(rec, r)
		f.mu.Lock()
		f.deletes = append(f.deletes, rec.status)
		f.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	f.url = ts.URL + "/mcp"
	return f
}

func (f *farServer) forget() {
	s := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "far " + in.Text}}}, nil, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	f.handler.Store(&h)
}

func (f *farServer) deleted() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.deletes...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// A tool at a URL whose server forgets the session (its 404) is a
// session gone for the sandbox's client too: the call is answered 404,
// start another with initialize, its place is freed, and the session
// the client starts then works. A session the client ends (its DELETE)
// ends the server's too: lnk-mcp-remote sends it DELETE, which the
// server knew (the control: one session before it, none after).
func TestARemoteSessionGoneTellsTheClientToInitializeAndOneEndedIsDeleted(t *testing.T) {
	far := newFarServer(t)
	r := newRig(t, map[string]caps.Tool{"far": {AskNone: true}}, Settings{Sessions: 1, StartWait: 10 * time.Second})
	d := &tooldef.Definition{Name: "far", Command: []string{testenv.Bin(t, "lnk-mcp-remote"), far.url}, URL: far.url, Env: map[string]*secret.Value{}}
	if err := r.store.Save(d); err != nil {
		t.Fatal(err)
	}
	start := func() string {
		t.Helper()
		st, sid, body := r.post("far", "", initBody)
		if st != 200 || sid == "" {
			t.Fatalf("initialize: %d %s", st, body)
		}
		if st, _, body := r.post("far", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != 202 {
			t.Fatalf("initialized: %d %s", st, body)
		}
		return sid
	}
	call := func(sid string) (int, string) {
		st, _, body := r.post("far", sid, `{"jsonrpc":"2.0","id":"c-9","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
		return st, body
	}
	sid := start()
	if st, body := call(sid); st != 200 || !strings.Contains(body, "far hi") {
		t.Fatalf("a call: %d %s", st, body)
	}
	far.forget()
	if st, body := call(sid); st != 404 || !strings.Contains(body, `"id":"c-9"`) || !strings.Contains(body, "start another with initialize") {
		t.Fatalf("a call of a session the server forgot: %d %s", st, body)
	}
	if n := r.bridge.Sessions(); n != 0 {
		t.Fatalf("%d sessions after the server forgot the one", n)
	}
	sid = start() // its one place is free again
	if st, body := call(sid); st != 200 || !strings.Contains(body, "far hi") {
		t.Fatalf("a call of the session started again: %d %s", st, body)
	}
	if got := far.deleted(); len(got) != 0 {
		t.Fatalf("DELETEs before any session was ended: %v", got)
	}
	if st := r.remove("far", sid); st/100 != 2 {
		t.Fatalf("the client's DELETE: %d", st)
	}
	waitFor(t, "the server's session to be deleted", func() bool { return len(far.deleted()) == 1 })
	if got := far.deleted(); got[0]/100 != 2 {
		t.Errorf("the DELETE of a session the server knew was answered %d", got[0])
	}
	if n := r.bridge.Sessions(); n != 0 {
		t.Errorf("%d sessions after the client ended its own", n)
	}
}

// remove sends a client's DELETE of its session.
func (r *rig) remove(tool, session string) int {
	r.t.Helper()
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	req, _ := http.NewRequest(http.MethodDelete, "http://127.0.0.1/mcp/"+tool, nil)
	req.Header.Set(SessionHeader, session)
	req.Write(c)
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A request of a session while it ends (its DELETE held at the server,
// lnk-mcp-remote still running in its grace) is answered as gone at once
// (404, start another with initialize), never sent to a server whose
// input is closed.
func TestARequestOfASessionEndingIsAnsweredGone(t *testing.T) {
	far := newFarServer(t)
	far.held, far.release = make(chan struct{}), make(chan struct{})
	var released sync.Once
	release := func() { released.Do(func() { close(far.release) }) }
	t.Cleanup(release) // before the server's Close, which waits for the DELETE
	r := newRig(t, map[string]caps.Tool{"far": {AskNone: true}}, Settings{})
	d := &tooldef.Definition{Name: "far", Command: []string{testenv.Bin(t, "lnk-mcp-remote"), far.url}, URL: far.url, Env: map[string]*secret.Value{}}
	if err := r.store.Save(d); err != nil {
		t.Fatal(err)
	}
	st, sid, body := r.post("far", "", initBody)
	if st != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", st, body)
	}
	ended := make(chan int, 1)
	go func() { ended <- r.remove("far", sid) }()
	<-far.held // the session's end has begun: its server is deleting
	st, _, body = r.post("far", sid, `{"jsonrpc":"2.0","id":"c-5","method":"ping"}`)
	if st != 404 || !strings.Contains(body, "initialize") {
		t.Fatalf("a ping of a session ending: %d %s", st, body)
	}
	release()
	if st := <-ended; st/100 != 2 {
		t.Fatalf("the client's DELETE: %d", st)
	}
}
