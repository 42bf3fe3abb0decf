package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// page serves a small page on this machine's loopback, which lnk-web
// fetches only because --private-host 127.0.0.1 names it.
func page(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		io.WriteString(rw, "<html><head><title>Peer page</title></head><body><h2>Served</h2><p>to a real peer</p></body></html>")
	}))
	t.Cleanup(s.Close)
	return s
}

// TestGoSDKClientListsAndCalls: the go-sdk's client, over lnk-web's
// stdio, lists fetch and search and calls fetch: a loopback page named
// by --private-host is fetched, a private address is refused with its
// reason and hint, and the refusal is logged once on stderr.
func TestGoSDKClientListsAndCalls(t *testing.T) {
	bin := testenv.Bin(t, "lnk-web")
	s := page(t)
	var stderr testenv.SyncBuffer
	cmd := exec.Command(bin, "--private-host", "127.0.0.1")
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "BRAVE_API_KEY=", "TAVILY_API_KEY=")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != "fetch" || tools.Tools[1].Name != "search" {
		t.Fatalf("tools/list: %+v %v", tools, err)
	}
	call := func(u string) (string, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": u}})
		if err != nil {
			t.Fatalf("fetch %s: %v", u, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	if text, isErr := call(s.URL + "/"); isErr || !strings.Contains(text, "Title: ` Peer page `") || !strings.Contains(text, "## Served") || !strings.Contains(text, "not by your owner") {
		t.Fatalf("fetch of the loopback page:\n%s", text)
	}
	text, isErr := call("http://10.0.0.1/")
	if !isErr || !strings.Contains(text, "private network address") || !strings.Contains(text, "hint: lnk sandbox tool add web -- lnk-web --private-host 10.0.0.1") {
		t.Fatalf("fetch of a private address:\n%s", text)
	}
	cs.Close()
	cmd.Wait()
	if n := strings.Count(stderr.String(), "refused"); n != 1 || !strings.Contains(stderr.String(), "http://10.0.0.1/") {
		t.Fatalf("stderr, want one refusal logged:\n%s", stderr.String())
	}
}

// TestInspectorCLIListsAndCalls: the npm inspector CLI (the one the file
// tool's tests install, services/filetool/testdata/npm), a client that is
// not Go's, lists lnk-web's calls and calls fetch.
func TestInspectorCLIListsAndCalls(t *testing.T) {
	cli, _ := filepath.Abs(filepath.Join("..", "filetool", "testdata", "npm", "node_modules", ".bin", "mcp-inspector"))
	_, err := os.Stat(cli)
	if err != nil { // run elsewhere (scripts/test-as-user.sh): the checkout's
		cli = filepath.Join(testenv.RepoRoot(t), "services", "filetool", "testdata", "npm", "node_modules", ".bin", "mcp-inspector")
		_, err = os.Stat(cli)
	}
	testenv.Require(t, err == nil, "the npm inspector CLI in services/filetool/testdata/npm (make deps installs it)")
	_, err = exec.LookPath("node")
	testenv.Require(t, err == nil, "node")
	bin := testenv.Bin(t, "lnk-web")
	s := page(t)
	inspect := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		argv := append([]string{"--cli", bin, "--private-host", "127.0.0.1"}, args...)
		cmd := exec.CommandContext(ctx, cli, argv...)
		cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("inspector %v: not JSON: %s", args, out)
		}
		return m
	}
	tools := inspect("--method", "tools/list")["tools"].([]any)
	if len(tools) != 2 {
		t.Fatalf("tools/list: %v", tools)
	}
	m := inspect("--method", "tools/call", "--tool-name", "fetch", "--tool-arg", "url="+s.URL+"/")
	c, _ := m["content"].([]any)
	if len(c) != 1 || m["isError"] == true || !strings.Contains(c[0].(map[string]any)["text"].(string), "Title: ` Peer page `") {
		t.Fatalf("tools/call fetch: %v", m)
	}
}
