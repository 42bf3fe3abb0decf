package runtool

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

func requireSandbox(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
}

// baseSpec is the test agent's sandbox file: no internet (so no proxy),
// a few programs, work/ written.
const baseSpec = `[internet]
on = false
[commands]
allow = ["sh", "true", "sleep", "cat", "head", "printf", "setsid", "echo"]
[files]
write = ["work"]
`

// testAgent makes agent ada in a test HOME with baseSpec and extra
// appended to it, and returns it with the binaries beside each other.
func testAgent(t testing.TB, extra string) *Agent {
	t.Helper()
	requireSandbox(t)
	lnk := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-keybroker")
	testenv.Bin(t, "lnk-fsbroker")
	testenv.Bin(t, "lnk-netbroker")
	testenv.Bin(t, "lnk-toolbridge")
	testenv.Bin(t, "lnk-run-tool")
	home := testenv.Home(t)
	ag, err := caps.CreateAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	l := caps.Layout{Home: home}
	if err := os.WriteFile(l.SandboxFile("ada"), []byte(baseSpec+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(l.FilesDir("ada"), "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAgent(home, "ada", lnk)
	if err != nil || a.ID != ag.ID {
		t.Fatalf("LoadAgent: %+v %v", a, err)
	}
	return a
}

// connect starts `lnk-run-tool serve --agent ada` for a's HOME and
// connects the go-sdk client to it.
func connect(t testing.TB, a *Agent) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk-run-tool"), "serve", "--agent", a.Name)
	cmd.Env = append(os.Environ(), "HOME="+a.Home)
	var log bytes.Buffer
	cmd.Stderr = &log
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "lnk-test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("lnk-run-tool's stderr:\n%s", log.String())
		}
	})
	return cs
}

// call calls tool name with args in conversation thread ("" names none)
// and returns its text and whether it was an error.
func call(t testing.TB, cs *mcp.ClientSession, thread, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if thread != "" {
		p.Meta = mcp.Meta{"link.local/thread": thread}
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// processesWith lists the pids whose command line holds every one of
// words as a whole argument, across the whole machine.
func processesWith(words ...string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		all := true
		for _, w := range words {
			found := false
			for _, a := range args {
				if a == w {
					found = true
				}
			}
			all = all && found
		}
		if all {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

type clientSession = *mcp.ClientSession
