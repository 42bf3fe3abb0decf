package runtool

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/serve"
	hstore "lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/wayin"
)

// linkHarness runs a real Link Harness (the built-in model) for agent a
// and writes its bridge.json where the way in reads it; it returns its
// conversations' folder.
func linkHarness(t *testing.T, a *Agent) string {
	t.Helper()
	ag, err := caps.LoadAgent(a.Home, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	model := httptest.NewServer(builtin.Handler(builtin.Options{}))
	t.Cleanup(model.Close)
	ad := filepath.Join(t.TempDir(), "Agent")
	for _, sub := range []string{"", "instructions", "chats", "memory", "skills"} {
		if err := os.Mkdir(filepath.Join(ad, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &config.Config{AgentID: ag.ID, Owner: ag.Owner, Name: ag.Name, Key: config.NewKey(), Port: port, AgentDir: ad,
		Model: config.Model{Format: "openai", BaseURL: model.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serve.Run(ctx, []*config.Config{c}, "", serve.Options{}) }()
	t.Cleanup(func() { cancel(); <-errc })
	d, err := ownerdir.Open(a.Home, ".lnk", "agents", a.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := config.WriteBridge(int(d.Fd()), config.BridgeFor(c)); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(ad, "chats")
}

// openWayIn opens the agent's real way in and serves it until the
// returned stop.
func openWayIn(t *testing.T, a *Agent) (stop func()) {
	t.Helper()
	ag, err := caps.LoadAgent(a.Home, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wayin.Open(a.Home, ag, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	once := false
	stop = func() {
		if !once {
			once = true
			cancel()
			<-done
			w.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

// messagesFrom is chats/<thread>'s messages from from, as the harness kept them.
func messagesFrom(t *testing.T, chats, thread, from string) []hstore.Event {
	b, err := os.ReadFile(filepath.Join(chats, thread, "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []hstore.Event
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e hstore.Event
		if json.Unmarshal([]byte(l), &e) == nil && e.Kind == hstore.KindMessage && e.From == from {
			out = append(out, e)
		}
	}
	return out
}

// TestEndingDeliveredOnceWhateverIsCut: a background command started at
// hop 2 ends while its agent's way in is closed: its supervisor's
// delivery fails and the ending stays (not lost). With the way in open,
// a delivery cut short after the harness took the ending and before it
// was marked told leaves it pending, and the next delivery is answered
// "taken already": the conversation holds the ending once, from
// run:<id>, at hop 3, and it is marked told.
func TestEndingDeliveredOnceWhateverIsCut(t *testing.T) {
	a := testAgent(t, "")
	chats := linkHarness(t, a)
	cs := connect(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "start", Arguments: map[string]any{"argv": []string{"true"}},
		Meta: mcp.Meta{"link.local/thread": "main", "link.local/hops": 2}})
	if err != nil || res.IsError {
		t.Fatalf("start: %v %+v", err, res)
	}
	id := startedID.FindStringSubmatch(res.Content[0].(*mcp.TextContent).Text)[1]
	from := "run:" + id
	ending := filepath.Join(a.Home, ".lnk", "agents", a.ID, "background", id+".ending.json")
	if !waitFor(30*time.Second, func() bool { _, err := os.Stat(ending); return err == nil }) {
		t.Fatal("no ending recorded")
	}
	// The supervisor tried the closed way in, and left it there.
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(ending); err != nil {
		t.Fatalf("the ending was lost with no way in: %v", err)
	}
	stop := openWayIn(t, a)
	// A delivery killed after the harness took it, before marking it told.
	cut := errors.New("the deliverer died here")
	ag, _ := caps.LoadAgent(a.Home, a.Name)
	caller, err := wayin.CallerFor(a.Home, ag)
	if err != nil {
		t.Fatal(err)
	}
	err = a.DeliverEndings(ctx, func(ctx context.Context, e Ending, text string) (bool, error) {
		if _, err := caller.Send(ctx, wayin.Message{From: e.From, Thread: e.Thread, Text: text, Hops: e.Hops}); err != nil {
			return false, err
		}
		return false, cut
	})
	if !errors.Is(err, cut) {
		t.Fatalf("the cut delivery: %v", err)
	}
	if _, err := os.Stat(ending); err != nil {
		t.Fatal("an ending the deliverer never marked told is gone")
	}
	if !waitFor(20*time.Second, func() bool { return len(messagesFrom(t, chats, "main", from)) == 1 }) {
		t.Fatal("the harness never took the ending")
	}
	// The next delivery: taken already, so marked told, never a second turn.
	if err := a.DeliverToWayIn(ctx); err != nil {
		t.Fatalf("the next delivery: %v", err)
	}
	if _, err := os.Stat(ending); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the ending was not marked told: %v", err)
	}
	if err := a.DeliverToWayIn(ctx); err != nil {
		t.Fatalf("nothing left to deliver: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	ms := messagesFrom(t, chats, "main", from)
	if len(ms) != 1 || ms[0].Hops != 3 || !strings.Contains(ms[0].Text, "Background command "+id+" ended (exited, exit status 0)") {
		t.Fatalf("the conversation holds %+v, want the ending once at hop 3", ms)
	}
	stop()
}

// TestEndingReachesTheAgentOnce: with the way in open, a background
// command's ending is handed by its own supervisor as it ends, once.
func TestEndingReachesTheAgentOnce(t *testing.T) {
	a := testAgent(t, "")
	chats := linkHarness(t, a)
	openWayIn(t, a)
	cs := connect(t, a)
	id := startBg(t, cs, "main", "true")
	from := "run:" + id
	if !waitFor(30*time.Second, func() bool { return len(messagesFrom(t, chats, "main", from)) == 1 }) {
		t.Fatal("the ending never reached the agent")
	}
	ending := filepath.Join(a.Home, ".lnk", "agents", a.ID, "background", id+".ending.json")
	if !waitFor(10*time.Second, func() bool { _, err := os.Stat(ending); return errors.Is(err, os.ErrNotExist) }) {
		t.Fatal("the ending was not marked told")
	}
	// A list (a sweep, and a delivery after it) hands nothing again.
	call(t, cs, "main", "list", map[string]any{})
	time.Sleep(time.Second)
	if n := len(messagesFrom(t, chats, "main", from)); n != 1 {
		t.Fatalf("the ending reached the agent %d times", n)
	}
}
