package toolbridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

func requireSandbox(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
}

// sandboxedClient copies the test binary into home/bin, a folder the
// sandbox is granted to read, so it can run there as the client.
func sandboxedClient(t testing.TB, home string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "bin")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(dir, "client")
	out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// answerYes answers every question that waits in home's store with
// `lnk ask answer ID yes`, the owner's way in, holding the store's
// "someone answers" lock (as a terminal or a chat would) until ctx ends.
// It returns the questions it answered, once done is closed.
func answerYes(ctx context.Context, t *testing.T, home string) <-chan []askbroker.Waiting {
	t.Helper()
	st, err := askbroker.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	release, err := st.Answering()
	if err != nil {
		t.Fatal(err)
	}
	lnk := testenv.Bin(t, "lnk")
	got := make(chan []askbroker.Waiting, 1)
	go func() {
		defer st.Close()
		defer release()
		var answered []askbroker.Waiting
		seen := map[string]bool{}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				got <- answered
				return
			case <-tick.C:
			}
			ws, _ := st.List()
			for _, w := range ws {
				if seen[w.ID] {
					continue
				}
				seen[w.ID] = true
				answered = append(answered, w)
				cmd := exec.Command(lnk, "ask", "answer", w.ID, "yes")
				cmd.Env = append(os.Environ(), "HOME="+home)
				cmd.Run()
			}
		}
	}()
	return got
}

// A go-sdk client inside a real `lnk sandbox run` reaches a granted tool
// through its proxy at $LNK_TOOL_TEST: it lists and calls; a call allowed
// by name passes, one not allowed is asked through askbroker's store and
// answered with `lnk ask answer`, a server's request for a model never
// reaches it, the server sees only its definition's environment, and the
// audit log names each call and never an argument.
func TestSandboxedClientCallsThroughTheBridge(t *testing.T) {
	requireSandbox(t)
	home := testenv.Home(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	def := &tooldef.Definition{Name: "test", Command: []string{self}}
	def.Env = envOf(t, "LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin")
	if err := (tooldef.Store{Home: home}).Save(def); err != nil {
		t.Fatal(err)
	}
	client := sandboxedClient(t, home)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")

	ctx, stopAnswering := context.WithCancel(context.Background())
	answered := answerYes(ctx, t, home)
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--read", filepath.Dir(client), "--command", client,
		"--tool", "test", "--allow", "echo", "--", client, "mcp-client")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 20 * time.Second
	runErr := cmd.Run()
	stopAnswering()
	asked := <-answered
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		t.Fatal(runErr)
	}
	lines := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		lines[k] = v
	}
	if cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", cmd.ProcessState.ExitCode(), out.String(), errb.String())
	}
	want := map[string]string{
		"url-prefix": "http://127.0.0.1:3128",
		"tools":      "delete,echo,env,sample,slow,wait",
		"echo":       "argument-echo-7f3a",
		"delete":     "deleted argument-delete-9c1e",
		"sampled":    "false",
		// Another secret is no route (the proxy relays, the bridge refuses);
		// a tool not granted is refused by name; no variable for it.
		"other-secret": "404",
		"not-granted":  "403",
		"other-vars":   "false",
	}
	for k, v := range want {
		if lines[k] != v {
			t.Errorf("%s = %q, want %q (all: %v; stderr %s)", k, lines[k], v, lines, errb.String())
		}
	}
	if !strings.Contains(lines["sample"], "refused outside") {
		t.Errorf("sample = %q: the server's sampling request was not refused outside", lines["sample"])
	}
	if env := lines["env"]; env != "cwd=/ env=LNK_TEST_MCP_SERVER,PATH" {
		t.Errorf("the server's environment: %q, want only its definition's", env)
	}
	// delete, sample and env are not allowed by name: each was asked.
	calls := map[string]bool{}
	for _, w := range asked {
		for _, c := range []string{"delete", "sample", "env"} {
			if strings.Contains(w.Call, "tool test: "+c+" ") {
				calls[c] = true
			}
		}
		if w.What != "mcp call" || !strings.Contains(w.Allow, "--tool test --allow") {
			t.Errorf("question %+v", w.Question)
		}
	}
	if !calls["delete"] || !calls["sample"] || !calls["env"] || len(asked) != 3 {
		t.Errorf("asked %d questions (%v), want delete, sample and env once each", len(asked), calls)
	}
	for _, w := range asked {
		if strings.Contains(w.Call, "tool test: delete ") && !strings.Contains(w.Call, "destructiveHint") {
			t.Errorf("the server's hint is not shown: %q", w.Call)
		}
	}
	checkAuditLog(t, home)
	checkOneRefusal(t, home, `"request":"mcp","route":"tool other (sandbox run-`, `"reason":"not granted"`)
	if os.Getenv("LNK_TEST_SHOW") != "" {
		b, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
		t.Logf("client:\n%s\naudit log:\n%s", out.String(), b)
	}
}

func checkAuditLog(t *testing.T, home string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{`"request":"mcp initialize"`, `"request":"mcp tools/list"`, `"request":"mcp echo"`, `"request":"mcp delete","route":"tool test (sandbox run-`, `"passed: the owner said yes"`, `"kind":"question"`, `tool test (sandbox run-`} {
		if !strings.Contains(log, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, log)
		}
	}
	for _, arg := range []string{"argument-echo-7f3a", "argument-delete-9c1e", "/_link/s/"} {
		if strings.Contains(log, arg) {
			t.Errorf("the audit log holds %q:\n%s", arg, log)
		}
	}
}

// checkOneRefusal: the audit log's one refusal is the line holding each
// of want: the go-sdk client's server/discover at every session's start
// is no refusal (discover.go), while a real one is logged, once.
func checkOneRefusal(t *testing.T, home string, want ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"kind":"refuse"`) {
			refused = append(refused, l)
		}
	}
	if len(refused) != 1 {
		t.Fatalf("the audit log holds %d refusals, want 1 (the tool not granted):\n%s", len(refused), strings.Join(refused, "\n"))
	}
	for _, w := range want {
		if !strings.Contains(refused[0], w) {
			t.Errorf("the refusal logged lacks %s: %s", w, refused[0])
		}
	}
}

func envOf(t *testing.T, kvs ...string) map[string]*secret.Value {
	t.Helper()
	env := map[string]*secret.Value{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		val, err := secret.FromString(v)
		if err != nil {
			t.Fatal(err)
		}
		env[k] = val
	}
	return env
}

// The bridge's limits are Link's settings: a settings file lnk cannot
// take stops the run before anything starts, saying why.
func TestSandboxRunReadsLinksSettingsForItsBridge(t *testing.T) {
	requireSandbox(t)
	home := testenv.Home(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	def := &tooldef.Definition{Name: "test", Command: []string{self}}
	def.Env = envOf(t, "LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin")
	if err := (tooldef.Store{Home: home}).Save(def); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".lnk", "settings.toml"), []byte("tool_sessions = 100000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--tool", "test", "--", "sh", "-c", "echo RAN")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	cmd.WaitDelay = 20 * time.Second
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "RAN") || !strings.Contains(string(out), "tool_sessions") {
		t.Fatalf("a settings file out of bounds: %v\n%s", err, out)
	}
}
