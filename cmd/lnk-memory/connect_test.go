package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/service"
)

// memory-<id>'s server as the proxy starts it (lnk-memory connect --agent
// NAME): the first session starts the owner's one service for every
// sandboxed agent of theirs, each session finds its own agent's documents
// only; an agent without its sandbox is refused (the positive control:
// its sandboxed siblings are served), and one made after the service
// started is served by a service started anew beside the one retiring,
// whose open sessions go on. The owner's
// stop ends the service and leaves every index where it was.
func TestConnectServesTheOwnersAgentsAndStopLeavesTheIndex(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	bin := testenv.Bin(t, "lnk-memory")
	for name, word := range map[string]string{"ada": "kumquat", "bob": "quince", "cal": "medlar"} {
		if _, err := caps.CreateAgent(home, name); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, "Link", "Agents", name, "Home", "memory", "doc.md")
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("# "+name+"\nabout "+word+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := caps.UpdateAgent(home, "cal", func(a *caps.Agent) error { a.NoSandbox = true; return nil }); err != nil {
		t.Fatal(err)
	}
	ada, _ := caps.LoadAgent(home, "ada")
	sock := filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "run", service.SocketName)
	t.Cleanup(func() { service.Stop(context.Background(), sock) })
	session := func(name string) (*mcp.ClientSession, *bytes.Buffer, error) {
		cmd := exec.Command(bin, "connect", "--agent", name)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		return cs, &stderr, err
	}
	search := func(cs *mcp.ClientSession, words string) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"words": words}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	a, stderr, err := session("ada")
	if err != nil {
		t.Fatalf("ada's session: %v\n%s", err, stderr)
	}
	defer a.Close()
	b, stderr, err := session("bob")
	if err != nil {
		t.Fatalf("bob's session: %v\n%s", err, stderr)
	}
	defer b.Close()
	if got := search(a, "kumquat"); !strings.Contains(got, "memory/doc.md") {
		t.Errorf("ada's search for her own word: %q", got)
	}
	if got := search(b, "quince"); !strings.Contains(got, "memory/doc.md") {
		t.Errorf("bob's search for his own word: %q", got)
	}
	if got := search(a, "quince"); got != "nothing found" {
		t.Errorf("ada found bob's document: %q", got)
	}
	if _, stderr, err := session("cal"); err == nil || !strings.Contains(stderr.String(), "without its sandbox") {
		t.Errorf("an agent without its sandbox was served: %v\n%s", err, stderr)
	}

	// An agent made while the service runs (its sandbox holds only the
	// agents of its start) is served all the same: the service retires,
	// a new one holding every agent of the owner takes dan's session, and
	// ada's session, open on the one retiring, goes on answering.
	if _, err := caps.CreateAgent(home, "dan"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, "Link", "Agents", "dan", "Home", "memory", "doc.md")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte("# dan\nabout sloe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dan, stderr, err := session("dan")
	if err != nil {
		t.Fatalf("dan's session, made while the service ran: %v\n%s", err, stderr)
	}
	defer dan.Close()
	if got := search(dan, "sloe"); !strings.Contains(got, "memory/doc.md") {
		t.Errorf("dan's search for his own word: %q", got)
	}
	if got := search(dan, "kumquat"); got != "nothing found" {
		t.Errorf("dan found ada's document: %q", got)
	}
	if got := search(a, "kumquat"); !strings.Contains(got, "memory/doc.md") {
		t.Errorf("ada's session, open on the service that retired: %q", got)
	}
	if got := search(a, "sloe"); got != "nothing found" {
		t.Errorf("ada found dan's document: %q", got)
	}
	// And ada's next session is the new service's.
	a2, stderr, err := session("ada")
	if err != nil {
		t.Fatalf("ada's second session: %v\n%s", err, stderr)
	}
	defer a2.Close()
	if got := search(a2, "kumquat"); !strings.Contains(got, "memory/doc.md") {
		t.Errorf("ada's search on the new service: %q", got)
	}
	if log, _ := os.ReadFile(filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "memory.log")); !strings.Contains(string(log), "retiring: a session needs agent "+mustID(t, home, "dan")) {
		t.Errorf("memory.log says nothing of the retirement:\n%s", log)
	}

	if err := service.Stop(context.Background(), sock); err != nil {
		t.Fatal(err)
	}
	if err := service.Stop(context.Background(), sock); !errors.Is(err, service.ErrNotRunning) {
		t.Errorf("a second stop: %v", err)
	}
	for _, name := range []string{"ada", "bob"} {
		st, err := os.Stat(filepath.Join(home, "Link", "Agents", name, "Agent", "memory", memory.Engine, "index.db"))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s's index after the stop: %v %v", name, st, err)
		}
	}
	log, _ := os.ReadFile(filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "memory.log"))
	if !strings.Contains(string(log), "stopped by its owner") {
		t.Errorf("memory.log:\n%s", log)
	}
}

func mustID(t *testing.T, home, name string) string {
	t.Helper()
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}
