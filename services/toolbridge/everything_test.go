package toolbridge

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// everythingTool adds @modelcontextprotocol/server-everything (npm, in
// testdata/npm, installed by scripts/install-deps.sh) as the tool
// "everything" over stdio, its PATH and HOME the only snapshot.
func everythingTool(t *testing.T, r *rig) {
	t.Helper()
	node, err := exec.LookPath("node")
	entry, _ := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	_, modErr := os.Stat(entry)
	testenv.Require(t, err == nil && modErr == nil, "node and the npm package @modelcontextprotocol/server-everything (make deps installs them)")
	d := &tooldef.Definition{Name: "everything", Command: []string{"node", entry, "stdio"}}
	d.Env = envOf(t, "PATH="+filepath.Dir(node)+":/usr/bin:/bin", "HOME="+r.home)
	if err := r.store.Save(d); err != nil {
		t.Fatal(err)
	}
}

// A real npm server over stdio, reached by the go-sdk client offering
// sampling, elicitation and roots: the bridge strips those capabilities,
// so the server's sampling and elicitation tools never reach the client
// (server-everything 2026.8.31 driven directly on stdio listed none of
// them even for a client offering both, so this guards against their
// appearing; the refusal of a server's sampling request is shown by the
// go-sdk server's "sample" tool, here and inside a real sandbox);
// a call passes; get-env shows the server's environment is its
// definition's snapshot, never the host's.
func TestServerEverythingThroughTheBridge(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"everything": {AskNone: true}}, Settings{})
	everythingTool(t, r)
	t.Setenv("LNK_TEST_HOST_ONLY", "host-value-5d2b")
	ctx, cs, asked := connectAsking(t, r, "everything")
	listWithoutAskingTools(t, ctx, cs, "echo", "get-env")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "through-npm"}})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "through-npm") {
		t.Fatalf("echo: %v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	env := res.Content[0].(*mcp.TextContent).Text
	if strings.Contains(env, "host-value-5d2b") || strings.Contains(env, "LNK_TEST_HOST_ONLY") || !strings.Contains(env, r.home) {
		t.Errorf("get-env shows more than the snapshot: %s", env)
	}
	if *asked {
		t.Error("a request of the server reached the client")
	}
}

// connectAsking connects, through r's bridge, a go-sdk client that offers
// sampling, elicitation and roots, to tool; *asked turns true if any
// request of the server reaches it.
func connectAsking(t *testing.T, r *rig, tool string) (context.Context, *mcp.ClientSession, *bool) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", r.sock)
	}}}
	asked := new(bool)
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			*asked = true
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "leaked"}, Model: "m", Role: "assistant"}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			*asked = true
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///secret-root"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1/mcp/" + tool, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ctx, cs, asked
}

// listWithoutAskingTools lists cs's tools, fails unless every name in
// must is among them, and reports each tool that asks the client.
func listWithoutAskingTools(t *testing.T, ctx context.Context, cs *mcp.ClientSession, must ...string) {
	t.Helper()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, m := range must {
		if !slices.Contains(names, m) {
			t.Fatalf("tools/list has no %s: %v", m, names)
		}
	}
	for _, n := range names {
		if strings.Contains(n, "sampling") || strings.Contains(n, "elicitation") || n == "get-roots-list" {
			t.Errorf("a tool that asks the client reached it: %s (all: %v)", n, names)
		}
	}
}
