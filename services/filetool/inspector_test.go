package filetool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestInspectorCLICallsEachTool: the npm @modelcontextprotocol/inspector
// CLI (testdata/npm, installed by make deps) lists the calls and calls
// each through lnk-file-tool serve, as a client that is not Go's.
func TestInspectorCLICallsEachTool(t *testing.T) {
	cli, _ := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", "mcp-inspector"))
	_, err := os.Stat(cli)
	testenv.Require(t, err == nil, "the npm inspector CLI in services/filetool/testdata/npm (make deps installs it)")
	_, err = exec.LookPath("node")
	testenv.Require(t, err == nil, "node")

	f := newFolders(t)
	os.WriteFile(filepath.Join(f.files, "notes.md"), []byte("one\ntwo\n"), 0o600)
	tool := testenv.Bin(t, "lnk-file-tool")
	inspect := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		argv := append([]string{"--cli", tool, "serve", "--", tool, "apply", "--files", f.files, "--write", "work"}, args...)
		cmd := exec.CommandContext(ctx, cli, argv...)
		cmd.Env = append(os.Environ(), "HOME="+f.aside, "npm_config_update_notifier=false")
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
	text := func(m map[string]any) string {
		c, _ := m["content"].([]any)
		if len(c) != 1 || m["isError"] == true {
			t.Fatalf("an answer that is not one text: %v", m)
		}
		return c[0].(map[string]any)["text"].(string)
	}

	tools := inspect("--method", "tools/list")["tools"].([]any)
	if len(tools) != 5 {
		t.Fatalf("tools/list: %v", tools)
	}
	call := func(name string, kv ...string) string {
		args := []string{"--method", "tools/call", "--tool-name", name}
		for _, a := range kv {
			args = append(args, "--tool-arg", a)
		}
		return text(inspect(args...))
	}
	if s := call("read", "path=notes.md"); !strings.Contains(s, `"text":"one\ntwo\n"`) {
		t.Fatalf("read: %s", s)
	}
	if s := call("write", "path=work/a.txt", "content=hello"); !strings.Contains(s, `"created":true`) {
		t.Fatalf("write: %s", s)
	}
	if s := call("replace", "path=work/a.txt", "old=hello", "new=goodbye"); !strings.Contains(s, `-hello`) {
		t.Fatalf("replace: %s", s)
	}
	if s := call("find", "text=bye"); !strings.Contains(s, `"path":"work/a.txt"`) {
		t.Fatalf("find: %s", s)
	}
	if s := call("list", "path=work"); !strings.Contains(s, `"name":"a.txt"`) {
		t.Fatalf("list: %s", s)
	}
}
