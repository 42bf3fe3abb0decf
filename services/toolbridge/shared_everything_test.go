package toolbridge

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// server-everything as a shared tool, under a real lnk-toolhub: variables
// whose names hold TOKEN, SECRET, KEY or PASS in the environment of the
// bridge that starts the hub reach neither the hub nor the server, and
// get-env shows the server only its definition's snapshot.
func TestSharedServerEverythingGetsNoSecretVariables(t *testing.T) {
	r := newRig(t, map[string]caps.Tool{"everything": {AskNone: true}}, Settings{})
	everythingTool(t, r)
	d, err := r.store.Load("everything")
	if err != nil {
		t.Fatal(err)
	}
	d.Shared = true
	if err := r.store.Save(d); err != nil {
		t.Fatal(err)
	}
	d.Destroy()
	for _, kv := range [][2]string{{"LNK_TEST_API_TOKEN", "tok-4c1e"}, {"GITHUB_SECRET", "sec-4c1e"}, {"LNK_SIGNING_KEY", "key-4c1e"}, {"DB_PASSWORD", "pw-4c1e"}} {
		t.Setenv(kv[0], kv[1])
	}
	r.bridge.Hubs = Hubs{Dir: filepath.Join(r.home, ".lnk"), Bin: testenv.Bin(t, "lnk-toolhub")}
	hubDir := filepath.Join(r.home, ".lnk")
	t.Cleanup(func() { killHubs(hubDir) })

	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", r.sock)
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1/mcp/everything", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("get-env: %v %v", res, err)
	}
	env := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(env, r.home) {
		t.Fatalf("get-env did not show the definition's HOME: %s", env)
	}
	hubs := hubProcs(hubDir)
	if len(hubs) == 0 {
		t.Fatal("no lnk-toolhub ran: the call did not go through a hub")
	}
	for _, secretValue := range []string{"tok-4c1e", "sec-4c1e", "key-4c1e", "pw-4c1e"} {
		if strings.Contains(env, secretValue) {
			t.Errorf("the shared server's environment holds %s: %s", secretValue, env)
		}
		for _, pid := range hubs {
			if b, _ := os.ReadFile("/proc/" + pid + "/environ"); strings.Contains(string(b), secretValue) {
				t.Errorf("the hub's environment holds %s", secretValue)
			}
		}
	}
}

// hubProcs are the pids of the lnk-toolhub processes serving dir.
func hubProcs(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b)+"\x00", "--dir\x00"+dir+"\x00") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func killHubs(dir string) {
	for _, p := range hubProcs(dir) {
		var pid int
		for _, c := range p {
			pid = pid*10 + int(c-'0')
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
