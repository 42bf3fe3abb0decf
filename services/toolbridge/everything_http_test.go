package toolbridge

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// everythingOverHTTP starts @modelcontextprotocol/server-everything in
// streamable-HTTP mode on 127.0.0.1 (testdata/everything/loopback.mjs
// pins the address and reports the port the system chose) and returns
// its URL. The server is killed and waited for when t ends.
func everythingOverHTTP(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	entry, _ := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	preload, _ := filepath.Abs(filepath.Join("testdata", "everything", "loopback.mjs"))
	_, modErr := os.Stat(entry)
	testenv.Require(t, err == nil && modErr == nil, "node and the npm package @modelcontextprotocol/server-everything (make deps installs them)")
	cmd := exec.Command(node, "--import", "file://"+preload, entry, "streamableHttp")
	cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "PORT=0"}
	cmd.Dir = "/"
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "lnk-test-listening="); ok {
				port <- p
			}
		}
		close(port)
	}()
	select {
	case p, ok := <-port:
		if !ok {
			t.Fatal("server-everything ended before it listened")
		}
		return "http://127.0.0.1:" + p + "/mcp"
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not listen within 30 s")
	}
	return ""
}

// server-everything over streamable HTTP, added as a tool with --url
// (`lnk sandbox tool add everything --url …`: Link's own remote client
// runs outside as a stdio server): a go-sdk client offering sampling,
// elicitation and roots lists and calls through the bridge, and none of
// the server's tools that ask the client reaches it. (Reached directly,
// server-everything 2026.8.31 lists get-roots-list,
// trigger-elicitation-request and trigger-sampling-request to this very
// client: they are missing here only because the bridge strips the
// client's capabilities.)
func TestServerEverythingOverHTTPThroughTheBridge(t *testing.T) {
	url := everythingOverHTTP(t)
	r := newRig(t, map[string]caps.Tool{"everything": {AskNone: true}}, Settings{})
	testenv.Bin(t, "lnk-mcp-remote") // beside lnk, where tool add names it: not on the tool's PATH
	add := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "tool", "add", "everything", "--url", url)
	add.Env = append(os.Environ(), "HOME="+r.home, "PATH=/usr/bin:/bin")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("tool add --url: %v\n%s", err, out)
	}
	ctx, cs, asked := connectAsking(t, r, "everything")
	listWithoutAskingTools(t, ctx, cs, "echo", "get-sum")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "over-http"}})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "over-http") {
		t.Fatalf("echo: %v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 40}})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "42") {
		t.Fatalf("get-sum: %v %v", res, err)
	}
	if *asked {
		t.Error("a request of the server reached the client")
	}
}
