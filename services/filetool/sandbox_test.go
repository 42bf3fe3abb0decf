package filetool_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// requireSandbox skips (or under LNK_REQUIRE_SANDBOX=1 fails) where this
// machine cannot build Link's sandbox.
func requireSandbox(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
}

// sandboxed is the command Link gives serve: lnk sandbox run with the
// grants' flags, then lnk-file-tool apply told it may write tell.
func sandboxed(t testing.TB, files string, grants []string, tell ...string) []string {
	t.Helper()
	lnk := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init") // beside lnk
	tool := testenv.Bin(t, "lnk-file-tool")
	argv := append([]string{lnk, "sandbox", "run", "--internet=false"}, grants...)
	argv = append(argv, "--read", filepath.Dir(tool), "--command", tool, "--", tool, "apply", "--files", files)
	for _, w := range tell {
		argv = append(argv, "--write", w)
	}
	return argv
}

// TestUnderTheSandbox runs the tool under a real `lnk sandbox run` that
// writes work/ only, with apply told it may write notes/ too: the write
// to work/ lands, the one to notes/ passes apply's check and is refused
// by the sandbox, and nothing outside the granted folders is reachable.
func TestUnderTheSandbox(t *testing.T) {
	requireSandbox(t)
	home := testenv.Home(t)
	files := filepath.Join(home, "files")
	for _, d := range []string{filepath.Join(files, "work"), filepath.Join(files, "notes"), filepath.Join(home, ".lnk")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(files, "a.txt"), []byte("hello\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".lnk", "settings"), []byte("secret\n"), 0o600)
	os.Symlink(filepath.Join(home, ".lnk"), filepath.Join(files, "work", "lnk"))

	grants := []string{"--read", files, "--write", filepath.Join(files, "work")}
	cs := connect(t, nil, sandboxed(t, files, grants, "work", "notes")...)

	if r := ok(t, cs, "read", map[string]any{"path": "a.txt"}); r["text"] != "hello\n" {
		t.Fatalf("read: %v", r)
	}
	ok(t, cs, "write", map[string]any{"path": "work/new.txt", "content": "made in the sandbox\n"})
	if b, err := os.ReadFile(filepath.Join(files, "work", "new.txt")); err != nil || string(b) != "made in the sandbox\n" {
		t.Fatalf("the write to work/ did not land: %q %v", b, err)
	}
	ok(t, cs, "replace", map[string]any{"path": "work/new.txt", "old": "made", "new": "changed"})

	text, isErr := call(t, cs, "write", map[string]any{"path": "notes/n.txt", "content": "x\n"})
	if !isErr || !strings.Contains(text, "read-only file system") {
		t.Fatalf("a write the sandbox does not allow: %v %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(files, "notes", "n.txt")); err == nil {
		t.Fatal("the sandbox let notes/ be written")
	}
	text, isErr = call(t, cs, "read", map[string]any{"path": "work/lnk/settings"})
	if !isErr || !strings.Contains(text, "through a link") {
		t.Fatalf("a read through a link: %v %q", isErr, text)
	}
	f := ok(t, cs, "find", map[string]any{"text": "."})
	var paths []string
	for _, m := range f["matches"].([]any) {
		paths = append(paths, m.(map[string]any)["path"].(string))
	}
	if strings.Join(paths, ",") != "a.txt,work/new.txt" {
		t.Fatalf("find in the sandbox: %v", paths)
	}
}
