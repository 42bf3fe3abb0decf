package service_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/service"
)

// TestMain is also the other uid's child: it dials the socket named in
// LNK_MEMORY_TEST_DIAL, says hello for agent ada, and prints what came
// back ("closed" when the service closed the session unanswered).
func TestMain(m *testing.M) {
	if sock := os.Getenv("LNK_MEMORY_TEST_LISTEN"); sock != "" {
		// Another uid's listener: says "listening", then holds one
		// connection until it is closed.
		l, err := net.Listen("unix", sock)
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		os.Chmod(sock, 0o666)
		fmt.Println("listening")
		c, err := l.Accept()
		if err == nil {
			c.Read(make([]byte, 1))
		}
		os.Exit(0)
	}
	if sock := os.Getenv("LNK_MEMORY_TEST_DIAL"); sock != "" {
		c, err := net.Dial("unix", sock)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		fmt.Fprint(c, service.Hello+"ada\n")
		fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil && line == "" {
			fmt.Println("closed")
		} else {
			fmt.Println("answered:", strings.TrimSpace(line))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type fixture struct {
	root, sock string
	log        *testenv.SyncBuffer
	done       chan error
}

// agent makes one agent's folders under root with one document in its
// memory/ and one conversation, each holding word.
func agent(t *testing.T, root, id, word string) *memory.Agent {
	t.Helper()
	home := filepath.Join(root, id, "Home")
	own := filepath.Join(root, id, "Agent")
	for p, text := range map[string]string{
		home + "/memory/doc.md":             "# " + id + "'s document\nabout " + word + "\n",
		own + "/chats/main/conversation.md": "## You\nwe spoke of " + word + " chats\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h, err := os.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	o, err := os.Open(own)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	a, err := memory.OpenAgent(id, h, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// start serves agents ada and bob of one owner from one service.
func start(t *testing.T, idle time.Duration) *fixture {
	t.Helper()
	root := t.TempDir()
	dirPath := filepath.Join(root, ".memory", "owner")
	if err := os.MkdirAll(dirPath, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.Open(dirPath)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	l, err := service.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{root: root, sock: filepath.Join(dirPath, "run", service.SocketName), log: &testenv.SyncBuffer{}, done: make(chan error, 1)}
	s := &service.Service{
		Agents: map[string]*memory.Agent{"ada": agent(t, root, "ada", "aardvark"), "bob": agent(t, root, "bob", "bonobo")},
		Idle:   idle,
		Log:    f.log,
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { f.done <- s.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-f.done })
	return f
}

// session opens an MCP client session for agent id.
func (f *fixture) session(t *testing.T, id string) *mcp.ClientSession {
	t.Helper()
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprint(c, service.Hello+id+"\n"); err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatalf("session for %s: %v", id, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool with args in conversation thread; its text and whether
// it was a tool error.
func call(t *testing.T, cs *mcp.ClientSession, tool, thread string, args map[string]any) (string, bool) {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if thread != "" {
		p.Meta = mcp.Meta{"link.local/thread": thread}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// Two agents of one owner on one service: neither finds, reads, lists
// or notes the other's.
func TestTwoAgentsOneService(t *testing.T) {
	f := start(t, time.Minute)
	ada, bob := f.session(t, "ada"), f.session(t, "bob")
	for _, s := range []struct {
		cs         *mcp.ClientSession
		mine, them string
	}{{ada, "aardvark", "bonobo"}, {bob, "bonobo", "aardvark"}} {
		if out, isErr := call(t, s.cs, "search", "", map[string]any{"words": s.mine}); isErr || !strings.Contains(out, "memory/doc.md") || !strings.Contains(out, "chats/main/conversation.md") {
			t.Errorf("search %s: %q", s.mine, out)
		}
		if out, _ := call(t, s.cs, "search", "", map[string]any{"words": s.them}); out != "nothing found" {
			t.Errorf("search %s found the other agent's: %q", s.them, out)
		}
		out, isErr := call(t, s.cs, "read", "", map[string]any{"path": "memory/doc.md"})
		if isErr || !strings.Contains(out, s.mine) || strings.Contains(out, s.them) {
			t.Errorf("read: %q", out)
		}
		if out, _ := call(t, s.cs, "list", "", nil); strings.Contains(out, s.them) || !strings.Contains(out, "memory/doc.md") {
			t.Errorf("list: %q", out)
		}
	}
	// A path of the other agent's, in every spelling, is not served.
	for _, p := range []string{"../bob/Home/memory/doc.md", f.root + "/bob/Home/memory/doc.md", "bob/memory/doc.md"} {
		if out, isErr := call(t, ada, "read", "", map[string]any{"path": p}); !isErr || !strings.Contains(out, "not a document memory indexed") {
			t.Errorf("ada read %q: %q", p, out)
		}
	}
	if out, isErr := call(t, ada, "remember", "main", map[string]any{"text": "ada's own note"}); isErr {
		t.Fatalf("remember: %q", out)
	}
	if b, err := os.ReadFile(f.root + "/ada/Agent/memory/notes.md"); err != nil || string(b) != "- ada's own note\n" {
		t.Errorf("ada's notes: %q %v", b, err)
	}
	if _, err := os.Stat(f.root + "/bob/Agent/memory/notes.md"); !os.IsNotExist(err) {
		t.Errorf("ada's remember wrote bob's notes: %v", err)
	}
	if out, isErr := call(t, bob, "remember", "agent-ada", map[string]any{"text": "x"}); !isErr || !strings.Contains(out, "only in a conversation of your owner's") {
		t.Errorf("remember in agent-ada: %q", out)
	}
	if out, isErr := call(t, bob, "read", "", map[string]any{"path": "memory/doc.md", "extra": 1}); !isErr || !strings.Contains(out, "bad arguments") {
		t.Errorf("an unknown argument: %q", out)
	}
}

// A session naming an agent the service doesn't serve, or a bad first
// line, is refused alone; the service serves the next.
func TestSessionRefusals(t *testing.T) {
	f := start(t, time.Minute)
	for _, hello := range []string{service.Hello + "carol\n", service.Hello + "Ada\n", "lnk-memory/2 agent ada\n", service.Hello + "ada \n", "\n"} {
		c, err := net.Dial("unix", f.sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, hello)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "refused: ") {
			t.Errorf("hello %q answered %q", hello, line)
		}
	}
	if !strings.Contains(f.log.String(), "agent carol: not an agent this service serves") {
		t.Errorf("log: %s", f.log.String())
	}
	if out, isErr := call(t, f.session(t, "ada"), "search", "", map[string]any{"words": "aardvark"}); isErr || !strings.Contains(out, "doc.md") {
		t.Errorf("the service after refusals: %q", out)
	}
}

// Another uid's session is refused (SO_PEERCRED), even with the socket
// and its folders opened up to it; the owner's is served.
func TestAnotherUIDRefused(t *testing.T) {
	other, uid := testenv.OtherUser(t)
	f := start(t, time.Minute)
	testenv.OpenSocketToAll(t, f.sock)
	run := testenv.SelfRunner(t, "LNK_MEMORY_TEST_DIAL="+f.sock)
	if out := run(other); out != "closed" {
		t.Errorf("lnktest's session: %s", out)
	}
	if !strings.Contains(f.log.String(), fmt.Sprintf("runs as uid %d, not this service's %d", uid, os.Getuid())) {
		t.Errorf("refusal not logged: %s", f.log.String())
	}
	// Positive control: the same child as the owner is answered.
	if out := run(nil); !strings.HasPrefix(out, "answered:") || !strings.Contains(out, `"id":1`) {
		t.Errorf("the owner's session: %s", out)
	}
}

// The service ends Idle after its last session ends, not while one is
// open.
func TestEndsAfterLastSession(t *testing.T) {
	f := start(t, 2*time.Second)
	cs := f.session(t, "ada")
	select {
	case err := <-f.done:
		t.Fatalf("ended with a session open: %v", err)
	case <-time.After(3 * time.Second):
	}
	call(t, cs, "list", "", nil)
	cs.Close()
	select {
	case err := <-f.done:
		if err != nil {
			t.Fatal(err)
		}
		f.done <- nil
	case <-time.After(30 * time.Second):
		t.Fatal("still serving long after its last session")
	}
}

// A second service starting while one listens (two first sessions at
// once) leaves the socket to the first, which goes on serving; once the
// first has ended, its socket left behind is replaced.
func TestSecondServiceLeavesTheSocket(t *testing.T) {
	f := start(t, time.Minute)
	dir, err := os.Open(filepath.Dir(filepath.Dir(f.sock)))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if _, err := service.Listen(dir); !errors.Is(err, service.ErrServed) {
		t.Fatalf("a second Listen while one serves: %v", err)
	}
	if out, isErr := call(t, f.session(t, "ada"), "search", "", map[string]any{"words": "aardvark"}); isErr || !strings.Contains(out, "doc.md") {
		t.Errorf("the first service after a second started: %q", out)
	}
	if err := service.Stop(context.Background(), f.sock); err != nil {
		t.Fatal(err)
	}
	l, err := service.Listen(dir)
	if err != nil {
		t.Fatalf("Listen over a socket no one serves: %v", err)
	}
	l.Close()
}
