package scheduler

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// peer is a real MCP client of the real lnk-scheduler-tool serving
// agent ada of a home of the test's.
type peer struct {
	t    *testing.T
	home string
	id   string
	cs   *mcp.ClientSession
	pid  int
}

func newAgent(t *testing.T, spec string) (home string, ag *caps.Agent) {
	t.Helper()
	home = testenv.Home(t)
	ag, err := caps.CreateAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if spec != "" {
		l := caps.Layout{Home: home}
		if err := os.WriteFile(l.SandboxFile("ada"), []byte(spec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home, ag
}

func connect(t *testing.T, home string) *peer {
	t.Helper()
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	cmd := exec.Command(testenv.Bin(t, "lnk-scheduler-tool"), "serve", "--agent", "ada")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "lnk-test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return &peer{t: t, home: home, cs: cs, pid: cmd.Process.Pid}
}

func (p *peer) call(meta mcp.Meta, name string, args map[string]any) (string, bool) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		p.t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func in(thread string, hops int) mcp.Meta {
	return mcp.Meta{"link.local/thread": thread, "link.local/hops": hops}
}

var scheduledID = regexp.MustCompile(`scheduled job ([0-9a-f]{16})`)

// TestSchedulerOverMCP: a real MCP peer lists the scheduler's tools and
// calls them. A job is written 0600 in Agent/schedule (0700) with the
// conversation and hops of the call's _meta (one more), never of its
// arguments; list and cancel reach only that conversation's jobs; a call
// at hop 8 is refused ([tool.scheduler] hops = 8: its job would be hop
// 9), one at hop 7 taken; a call naming no conversation is refused.
func TestSchedulerOverMCP(t *testing.T) {
	home, _ := newAgent(t, "")
	p := connect(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := p.cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	out, isErr := p.call(in("main", 2), "add", map[string]any{"text": "water the plants", "in_minutes": 5})
	m := scheduledID.FindStringSubmatch(out)
	if isErr || m == nil {
		t.Fatalf("add: %q", out)
	}
	dir := filepath.Join(home, "Link", "Agents", "ada", "Agent", "schedule")
	st, err := os.Stat(filepath.Join(dir, m[1]+".json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the job's file: %v %v", st, err)
	}
	if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
		t.Fatalf("the schedule folder is %v", dst.Mode())
	}
	b, _ := os.ReadFile(filepath.Join(dir, m[1]+".json"))
	j, err := ParseJob(b)
	if err != nil || j.Thread != "main" || j.Hops != 3 || j.Text != "water the plants" || j.Next.Sub(time.Now()) < 4*time.Minute {
		t.Fatalf("the job read back: %+v %v", j, err)
	}
	// The model's words can't name the conversation or hops.
	if out, isErr := p.call(in("main", 0), "add", map[string]any{"text": "x", "in_minutes": 1, "thread": "other"}); !isErr {
		t.Errorf("a conversation in the arguments was taken: %q", out)
	}
	if out, _ := p.call(in("other", 0), "list", map[string]any{}); strings.Contains(out, m[1]) {
		t.Errorf("another conversation lists the job: %q", out)
	}
	if out, isErr := p.call(in("other", 0), "cancel", map[string]any{"id": m[1]}); !isErr || !strings.Contains(out, "no such job in this conversation") {
		t.Errorf("another conversation's cancel: %q", out)
	}
	if out, _ := p.call(in("main", 0), "list", map[string]any{}); !strings.Contains(out, m[1]) || !strings.Contains(out, "water the plants") {
		t.Errorf("its own list: %q", out)
	}
	if out, isErr := p.call(in("main", 8), "add", map[string]any{"text": "deeper", "in_minutes": 1}); !isErr || !strings.Contains(out, "would be hop 9, past the agent's cap ([tool.scheduler] hops = 8)") || !strings.Contains(out, "hint:") {
		t.Errorf("hop 8's add: %q", out)
	}
	if out, isErr := p.call(in("main", 7), "add", map[string]any{"text": "deep", "cron": "0 9 * * 1-5"}); isErr {
		t.Errorf("hop 7's add: %q", out)
	}
	if out, isErr := p.call(mcp.Meta{"link.local/hops": 0}, "list", map[string]any{}); !isErr || !strings.Contains(out, "names no conversation") {
		t.Errorf("no conversation: %q", out)
	}
	if out, isErr := p.call(in("webhook:gh", 0), "list", map[string]any{}); !isErr || !strings.Contains(out, "stranger") {
		t.Errorf("a stranger's conversation: %q", out)
	}
	if out, isErr := p.call(in("main", 0), "cancel", map[string]any{"id": m[1]}); isErr || !strings.Contains(out, "cancelled") {
		t.Fatalf("its own cancel: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, m[1]+".json")); !os.IsNotExist(err) {
		t.Fatalf("the cancelled job is still there: %v", err)
	}
}

// TestSchedulerConfined: the server runs under no_new_privs and a
// seccomp filter (its landlock domain, to the schedule folder alone, is
// shown by what it can't reach: it answers from there and nothing else).
func TestSchedulerConfined(t *testing.T) {
	home, _ := newAgent(t, "")
	p := connect(t, home)
	p.call(in("main", 0), "list", map[string]any{})
	b, err := os.ReadFile("/proc/" + itoa(p.pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "NoNewPrivs:\t1") || !strings.Contains(s, "Seccomp:\t2") {
		t.Fatalf("not confined:\n%s", s)
	}
}
