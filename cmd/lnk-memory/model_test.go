package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/memory/service"
)

// startServe runs lnk-memory serve for agent ada under home with env
// added, and returns an MCP session to it and its output.
func startServe(t *testing.T, home string, env ...string) (*mcp.ClientSession, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner", "owner", "--agent", "ada=ada", "--idle", "1m")
	cmd.Env = append([]string{"HOME=" + home, "PATH=/usr/bin:/bin"}, env...)
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sock := home + "/Link/Agents/.memory/owner/run/" + service.SocketName
	var c net.Conn
	var err error
	for i := 0; i < 200; i++ {
		if c, err = net.Dial("unix", sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no socket: %v\n%s", err, out.String())
	}
	fmt.Fprint(c, service.Hello+"ada\n")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, out
}

func search(t *testing.T, cs *mcp.ClientSession, words string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"words": words}, Meta: mcp.Meta{"link.local/thread": "main"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func modelHome(t *testing.T) string {
	home := t.TempDir()
	for p, text := range map[string]string{
		home + "/Link/Agents/ada/Home/memory/fruit.md":             "A kumquat tree grows by the door.\n",
		home + "/Link/Agents/ada/Agent/chats/main/conversation.md": "hello\n",
	} {
		if err := os.MkdirAll(p[:strings.LastIndexByte(p, '/')], 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{home + "/Link", home + "/Link/Agents"} {
		os.Chmod(d, 0o700)
	}
	return home
}

// Confined and filtered, the service reaches the built-in model on its
// loopback port and finds by meaning a document sharing no word with
// the search (kumquats / kumquat); without a model it finds nothing.
func TestServeSearchesByMeaningThroughItsSandbox(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: builtin.Handler(builtin.Options{})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	cs, _ := startServe(t, modelHome(t))
	if got := search(t, cs, "kumquats"); strings.Contains(got, "fruit.md") {
		t.Fatalf("found by words alone: %q", got)
	}
	cs, out := startServe(t, modelHome(t), "LNK_MEMORY_MODEL="+ln.Addr().String())
	var got string
	for i := 0; i < 100; i++ {
		if got = search(t, cs, "kumquats"); strings.Contains(got, "fruit.md") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("never found by meaning: %q\n%s", got, out.String())
}

// A model address that is not loopback is refused, and the service does
// not start; the loopback one above is the positive control.
func TestServeRefusesAModelOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:80", "[::]:80", "localhost:80", "127.0.0.1"} {
		home := modelHome(t)
		cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner", "owner", "--agent", "ada=ada", "--idle", "1s")
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LNK_MEMORY_MODEL=" + addr}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "refused") || !strings.Contains(string(out), "hint: ") {
			t.Errorf("LNK_MEMORY_MODEL=%s: %v\n%s", addr, err, out)
		}
	}
}
