package filetool_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestNoFindNoDiffs: the flags leave find, and each write's and
// replace's diff, diff_cut and sha256, out of what the server lists, says
// and answers; without them, the same calls answer each.
func TestNoFindNoDiffs(t *testing.T) {
	big := strings.Repeat("a line of a file past 16 KB of diff\n", 600)
	calls := []struct {
		name string
		args map[string]any
		has  []string // what the answer holds without --no-diffs
	}{
		{"write", map[string]any{"path": "work/a.txt", "content": "x\n"}, []string{"diff"}},
		{"replace", map[string]any{"path": "work/a.txt", "old": "x", "new": "y"}, []string{"diff"}},
		{"write", map[string]any{"path": "work/big.txt", "content": big}, []string{"diff_cut", "sha256"}},
		{"replace", map[string]any{"path": "work/big.txt", "old": "a", "new": "b", "all": true}, []string{"diff_cut", "sha256"}},
	}
	for _, noDiffs := range []bool{false, true} {
		f := newFolders(t)
		flags := []string{}
		if noDiffs {
			flags = []string{"--no-find", "--no-diffs"}
		}
		cs := connect(t, flags, applyIn(t, f, filepath.Join(f.aside, "starts"), "work")...)
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools.Tools {
			if noDiffs && (tl.Name == "find" || strings.Contains(tl.Description, "diff")) {
				t.Errorf("offered: %s: %s", tl.Name, tl.Description)
			}
		}
		for _, c := range calls {
			a := ok(t, cs, c.name, c.args)
			if v, _ := a["version"].(string); v == "" {
				t.Errorf("%s %s: no version: %v", c.name, c.args["path"], a)
			}
			for _, k := range []string{"diff", "diff_cut", "sha256"} {
				_, has := a[k]
				if want := !noDiffs && slices.Contains(c.has, k); has != want {
					t.Errorf("--no-diffs %v: %s %s: %s %v, want %v", noDiffs, c.name, c.args["path"], k, has, want)
				}
			}
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find", Arguments: map[string]any{"name": "*"}})
		if found := err == nil && !res.IsError; found == noDiffs {
			t.Fatalf("--no-find %v: find answered %v", noDiffs, found)
		}
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
