package toolbridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// rig is a bridge serving on a unix socket, with the tests' server added
// as a tool under a temporary HOME.
type rig struct {
	t      *testing.T
	home   string
	sock   string
	store  tooldef.Store
	bridge *Bridge
	mu     sync.Mutex
	events []Event
}

func newRig(t *testing.T, grants map[string]caps.Tool, set Settings, env ...string) *rig {
	home := testenv.Home(t)
	r := &rig{t: t, home: home, store: tooldef.Store{Home: home}}
	r.addTool("test", env...)
	r.bridge = &Bridge{Agent: "ada", Grants: grants, Defs: r.store, Settings: set, Log: func(e Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	}}
	r.sock = filepath.Join(home, "bridge.sock")
	l, err := net.Listen("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	go (&Server{Bridge: r.bridge}).Serve(l)
	t.Cleanup(func() { l.Close(); r.bridge.Close() })
	return r
}

func (r *rig) addTool(name string, env ...string) {
	self, err := os.Executable()
	if err != nil {
		r.t.Fatal(err)
	}
	d := &tooldef.Definition{Name: name, Command: []string{self}, Env: map[string]*secret.Value{}}
	for _, kv := range append([]string{"LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin"}, env...) {
		k, v, _ := strings.Cut(kv, "=")
		d.Env[k], _ = secret.FromString(v)
	}
	if err := r.store.Save(d); err != nil {
		r.t.Fatal(err)
	}
}

// post sends one request on a connection of its own.
func (r *rig) post(tool, session, body string) (int, string, string) {
	r.t.Helper()
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close()
	req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp/"+tool, strings.NewReader(body))
	if session != "" {
		req.Header.Set(SessionHeader, session)
	}
	req.Write(c)
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		r.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(SessionHeader), string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"1"}}}`

func (r *rig) initSession() string {
	r.t.Helper()
	st, sid, body := r.post("test", "", initBody)
	if st != 200 || sid == "" {
		r.t.Fatalf("initialize: %d %q %s", st, sid, body)
	}
	if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != 202 {
		r.t.Fatalf("initialized: %d %s", st, body)
	}
	return sid
}

func (r *rig) call(sid, tool, text string) (int, string) {
	st, _, body := r.post("test", sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":"c-7","method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, tool, text))
	return st, body
}

func (r *rig) logged() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCallsPassOnlyByTheToolsRules(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, Settings{})
	sid := r.initSession()
	st, body := r.call(sid, "echo", "hello")
	if st != 200 || !strings.Contains(body, `"hello"`) || !strings.Contains(body, `"id":"c-7"`) {
		t.Fatalf("allowed call: %d %s", st, body)
	}
	st, body = r.call(sid, "delete", "everything")
	if st != 200 || !strings.Contains(body, `"error"`) || !strings.Contains(body, "lnk agent allow ada --tool test --allow delete") {
		t.Fatalf("a call not allowed by name with no one to ask: %d %s", st, body)
	}
	if r.bridge.Refused() != 1 {
		t.Errorf("refused calls counted %d, want 1", r.bridge.Refused())
	}
	// listing passes as it is
	_, _, body = r.post("test", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for _, n := range []string{"echo", "delete", "env", "sample", "slow"} {
		if !strings.Contains(body, `"name":"`+n+`"`) {
			t.Errorf("tools/list lacks %s: %s", n, body)
		}
	}
	for _, e := range r.logged() {
		if strings.Contains(fmt.Sprint(e), "hello") || strings.Contains(fmt.Sprint(e), "everything") {
			t.Errorf("the log holds an argument: %+v", e)
		}
	}
}

func TestToolNotGrantedIsRefused(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"other": {AskNone: true}}, Settings{})
	st, _, body := r.post("test", "", initBody)
	if st != 403 || !strings.Contains(body, "lnk agent allow ada --tool test") {
		t.Fatalf("%d %s", st, body)
	}
}

type recordingAsker struct {
	mu  sync.Mutex
	qs  []Question
	yes bool
}

func (a *recordingAsker) Ask(ctx context.Context, q Question) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.qs = append(a.qs, q)
	return a.yes, nil
}

func TestAskingShowsHintsAndCoversOneCall(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"test": {}}, Settings{})
	asker := &recordingAsker{yes: true}
	r.bridge.Asker = asker
	sid := r.initSession()
	r.post("test", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for i := 0; i < 2; i++ {
		if st, body := r.call(sid, "delete", "x"); st != 200 || !strings.Contains(body, "deleted x") {
			t.Fatalf("approved call %d: %d %s", i, st, body)
		}
	}
	if len(asker.qs) != 2 {
		t.Fatalf("asked %d times for two calls, want each asked once", len(asker.qs))
	}
	q := asker.qs[0]
	if q.Tool != "test" || q.Call != "delete" || q.Digest != digestOf(`{"text":"x"}`) || strings.Join(q.Hints, ",") != "destructiveHint" {
		t.Errorf("question %+v", q)
	}
	asker.yes = false
	if _, body := r.call(sid, "echo", "y"); !strings.Contains(body, "the owner said no") {
		t.Errorf("a refused answer: %s (a readOnlyHint never skips asking)", body)
	}
}

func TestServerRequestsAreRefusedOutside(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"test": {AskNone: true}}, Settings{})
	sid := r.initSession()
	st, body := r.call(sid, "sample", "")
	if st != 200 || !strings.Contains(body, "refused outside the sandbox") {
		t.Fatalf("a server's sampling request: %d %s", st, body)
	}
	seen, _, _ := strings.Cut(body, "; sampling")
	if strings.Contains(seen, "sampling") || strings.Contains(seen, "elicitation") || strings.Contains(seen, "listChanged") {
		t.Errorf("the client's capabilities reached the server: %s", seen)
	}
}

func TestMessagesWithoutAnIDAndBatches(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"test": {AskNone: true}}, Settings{})
	sid := r.initSession()
	st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	if st != 403 {
		t.Errorf("an id-less tools/call: %d %s", st, body)
	}
	if st, _, _ := r.post("test", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`); st != 202 {
		t.Errorf("notifications/cancelled: %d", st)
	}
	if st, _, _ := r.post("test", sid, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`); st != 400 {
		t.Errorf("a batch: %d", st)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", MaxBody) + `"}}`
	if st, _, _ := r.post("test", sid, big); st != 413 {
		t.Errorf("a body over 8 MB: %d", st)
	}
	if st, _, _ := r.post("test", sid, `{"jsonrpc":"2.0","id":1,"result":{}}`); st != 403 {
		t.Errorf("a client's answer to nothing: %d", st)
	}
}

func TestEnvironmentIsTheDefinitionsAndItRunsInRoot(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "not-for-tools")
	r := newRig(t, map[string]caps.Tool{"test": {AskNone: true}}, Settings{}, "API_KEY=k")
	sid := r.initSession()
	_, body := r.call(sid, "env", "")
	if !strings.Contains(body, "cwd=/ ") || !strings.Contains(body, "env=API_KEY,LNK_TEST_MCP_SERVER,PATH") {
		t.Errorf("the server's environment: %s", body)
	}
}

// The body's limit is 8 MB exactly (8 MiB): a message of that many bytes
// reaches the server and is answered; one byte more is refused (413)
// before the server sees it.
func TestABodyOfExactly8MBPassesAndOneByteMoreIsRefused(t *testing.T) {
	if MaxBody != 8<<20 {
		t.Fatalf("MaxBody is %d, not 8 MiB", MaxBody)
	}
	r := newRig(t, askNone, Settings{})
	sid := r.initSession()
	of := func(n int) string {
		head, tail := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"`, `"}}}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	if st, _, body := r.post("test", sid, of(MaxBody)); st != 200 || !strings.Contains(body, `"id":5`) {
		t.Errorf("a body of exactly 8 MiB: %d %.200s", st, body)
	}
	if st, _, body := r.post("test", sid, of(MaxBody+1)); st != 413 {
		t.Errorf("a body of 8 MiB and a byte: %d %.200s", st, body)
	}
}
