package filetool_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// applyIn is a command that notes each start's pid in starts, then runs
// lnk-file-tool apply on f.
func applyIn(t testing.TB, f folders, starts string, write ...string) []string {
	args := "exec " + testenv.Bin(t, "lnk-file-tool") + " apply --files " + f.files
	for _, w := range write {
		args += " --write " + w
	}
	return []string{"/bin/sh", "-c", "echo $$ >>" + starts + "; " + args}
}

func startsIn(t testing.TB, starts string) []string {
	b, _ := os.ReadFile(starts)
	return strings.Fields(string(b))
}

// TestGoSDKClientCallsEachTool: the official go-sdk client lists the
// calls and calls each; the session's calls run in one process, started
// at the first call; one killed between calls is started again at the
// next.
func TestGoSDKClientCallsEachTool(t *testing.T) {
	f := newFolders(t)
	os.WriteFile(filepath.Join(f.files, "notes.md"), []byte("one\ntwo\n"), 0o600)
	starts := filepath.Join(f.aside, "starts")
	cs := connect(t, nil, applyIn(t, f, starts, "work")...)

	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "find,list,read,replace,write" {
		t.Fatalf("tools: %v", names)
	}
	if n := len(startsIn(t, starts)); n != 0 {
		t.Fatalf("the sandboxed process started before the first call (%d)", n)
	}

	if r := ok(t, cs, "read", map[string]any{"path": "notes.md"}); r["text"] != "one\ntwo\n" {
		t.Fatalf("read: %v", r)
	}
	w := ok(t, cs, "write", map[string]any{"path": "work/a.txt", "content": "x\n"})
	if w["created"] != true || !strings.Contains(w["diff"].(string), "+x") {
		t.Fatalf("write: %v", w)
	}
	if r := ok(t, cs, "replace", map[string]any{"path": "work/a.txt", "old": "x", "new": "y"}); !strings.Contains(r["diff"].(string), "-x\n+y") {
		t.Fatalf("replace: %v", r)
	}
	if r := ok(t, cs, "find", map[string]any{"name": "*.TXT"}); len(r["matches"].([]any)) != 1 {
		t.Fatalf("find: %v", r)
	}
	if r := ok(t, cs, "list", nil); len(r["entries"].([]any)) != 2 {
		t.Fatalf("list: %v", r)
	}
	text, isErr := call(t, cs, "write", map[string]any{"path": "notes.md", "content": "z"})
	if !isErr || text != `write "notes.md": not in a folder --write names (work)` {
		t.Fatalf("a refused write: %v %q", isErr, text)
	}
	pids := startsIn(t, starts)
	if len(pids) != 1 {
		t.Fatalf("a session's calls started %d processes", len(pids))
	}

	pid, _ := strconv.Atoi(pids[0])
	syscall.Kill(pid, syscall.SIGKILL)
	// Gone, not a zombie: a zombie leader's other threads may still hold
	// its stdin open. serve waits for it, so it goes once every thread did.
	waitFor(t, "the killed process to be gone", func() bool {
		_, err := os.Stat("/proc/" + pids[0])
		return err != nil
	})
	if r := ok(t, cs, "read", map[string]any{"path": "work/a.txt"}); r["text"] != "y\n" {
		t.Fatalf("read after a restart: %v", r)
	}
	if n := len(startsIn(t, starts)); n != 2 {
		t.Fatalf("after one ended, %d starts", n)
	}
}

// TestNoFindNoDiffs: the flags leave find, and each answer's diff, out of
// what the server lists, says and answers.
func TestNoFindNoDiffs(t *testing.T) {
	f := newFolders(t)
	cs := connect(t, []string{"--no-find", "--no-diffs"}, applyIn(t, f, filepath.Join(f.aside, "starts"), "work")...)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "find" || strings.Contains(tl.Description, "diff") {
			t.Errorf("offered: %s: %s", tl.Name, tl.Description)
		}
	}
	w := ok(t, cs, "write", map[string]any{"path": "work/a.txt", "content": "x\n"})
	if _, has := w["diff"]; has || w["version"] == "" {
		t.Fatalf("--no-diffs answered %v", w)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find", Arguments: map[string]any{"name": "*"}})
	if err == nil && !res.IsError {
		t.Fatalf("find was answered under --no-find")
	}
}

// TestNeverStartsSaysWhy: a sandboxed process that never starts is
// reported with what it wrote on stderr, and tried again at the next
// call.
func TestNeverStartsSaysWhy(t *testing.T) {
	f := newFolders(t)
	cs := connect(t, nil, testenv.Bin(t, "lnk-file-tool"), "apply", "--files", f.files, "--write", "chats")
	for i := 0; i < 2; i++ {
		text, isErr := call(t, cs, "list", nil)
		if !isErr || !strings.Contains(text, "did not start") || !strings.Contains(text, "chats/ and memory/ are Link's to write") {
			t.Fatalf("call %d: %v %q", i, isErr, text)
		}
	}
	cs2 := connect(t, nil, "/bin/sh", "-c", "echo no such sandbox here >&2; exit 5")
	text, isErr := call(t, cs2, "read", map[string]any{"path": "a"})
	if !isErr || !strings.Contains(text, "no such sandbox here") || !strings.Contains(text, "exit status 5") {
		t.Fatalf("%v %q", isErr, text)
	}
}
