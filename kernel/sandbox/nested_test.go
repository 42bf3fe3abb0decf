package sandbox_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// nestedWorld is a written folder holding a repository two folders down,
// its .git/config what the owner's git reads.
func nestedWorld(t *testing.T) (world, string) {
	w := newWorld(t)
	repo := filepath.Join(w.data, "a", "site")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, ".git", "config"), "[core]\n")
	return w, repo
}

// TestNestedRepositoryReadOnly: with --write on a folder holding a
// repository, the sandbox can't write its .git/config, remove or replace
// .git, nor move the repository (or the folder above it) aside to make
// another .git in its place; it still writes the repository's files
// (the control), and with --write-git it writes .git/config too.
func TestNestedRepositoryReadOnly(t *testing.T) {
	w, repo := nestedWorld(t)
	f := false
	script := `r=$1
echo '[core] fsmonitor = evil' >> "$r/.git/config" 2>/dev/null && echo "wrote config"
mv "$r/.git" "$r/.git.aside" 2>/dev/null && echo "moved .git"
mv "$r" "$r.aside" 2>/dev/null && echo "moved repo"
mv "$(dirname "$r")" "$(dirname "$r").aside" 2>/dev/null && echo "moved parent"
echo ok > "$r/file" && echo control-ok
exit 0`
	c := compile(t, w, caps.Grants{Write: []string{w.data}, Commands: []string{"mv", "dirname"}, Internet: &f})
	if len(c.NestedReadOnly) != 1 || c.NestedReadOnly[0].Path != filepath.Join(repo, ".git") {
		t.Fatalf("compiled nested %+v", c.NestedReadOnly)
	}
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c", script, "sh", repo)
	if code != 0 || strings.TrimSpace(out) != "control-ok" {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(b) != "[core]\n" {
		t.Fatalf(".git/config changed: %q", b)
	}

	c = compile(t, w, caps.Grants{WriteGit: []string{w.data}, Commands: []string{"mv", "dirname"}, Internet: &f})
	if len(c.NestedReadOnly) != 0 {
		t.Fatalf("--write-git compiled nested %+v", c.NestedReadOnly)
	}
	code, out, errs = run(t, c, sandbox.Options{}, "sh", "-c", `echo '#x' >> "$1/.git/config" && echo wrote`, "sh", repo)
	if code != 0 || strings.TrimSpace(out) != "wrote" {
		t.Fatalf("--write-git: code %d, out %q, err %q", code, out, errs)
	}
}

// TestNestedRepositoryReplacedRefused: a .git moved into the place of
// the one caps checked is not bound: the build refuses.
func TestNestedRepositoryReplacedRefused(t *testing.T) {
	w, repo := nestedWorld(t)
	f := false
	c := compile(t, w, caps.Grants{Write: []string{w.data}, Internet: &f})
	opt := sandbox.Options{Argv: []string{"sh", "-c", "true"}, InitPath: testenv.Bin(t, "lnk-init")}
	s, err := sandbox.Build(c, opt)
	if err != nil {
		t.Fatalf("the control, nothing replaced: %v", err)
	}
	s.Close()
	if err := os.Rename(filepath.Join(repo, ".git"), filepath.Join(repo, ".git.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err = sandbox.Build(c, opt)
	if err == nil {
		s.Close()
		t.Fatal("built with another .git in place of the one checked")
	}
	if !strings.Contains(err.Error(), "another folder now") {
		t.Fatalf("want ErrFolderChanged, got %v", err)
	}
}

// TestCheckProbesNestedRepository: lnk sandbox check --write finds a
// nested repository's .git, and the folders holding it, closed; the
// same probes run in a sandbox built without that protection find them
// open, so the probe can fail.
func TestCheckProbesNestedRepository(t *testing.T) {
	w, repo := nestedWorld(t)
	code, rs, errs := check(t, lnk, "--write", w.data)
	want := map[string]bool{
		"write nested " + filepath.Join(repo, ".git"):                                  true,
		"remove or replace nested " + filepath.Join(repo, ".git"):                      true,
		"move aside " + repo + ", which holds a nested .git, .envrc, .vscode or .idea": true,
	}
	seen := 0
	for _, r := range rs {
		if want[r.Name] {
			seen++
			if r.Got != probe.Closed {
				t.Errorf("%s: %s (%s)", r.Name, r.Got, r.Detail)
			}
		}
	}
	if code != 0 || seen != len(want) {
		t.Fatalf("exit %d, %d of %d nested probes ran\n%s", code, seen, len(want), errs)
	}

	// The protection removed: the same probes, in a sandbox without it.
	f := false
	c := compile(t, w, caps.Grants{Write: []string{w.data}, Internet: &f})
	var spec probe.Spec
	for _, p := range probe.List(c, probe.Host{}).Probes {
		if want[p.Name] {
			spec.Probes = append(spec.Probes, p)
		}
	}
	bare := *c
	bare.NestedReadOnly, bare.Pinned = nil, nil
	lnkBin := testenv.Bin(t, "lnk")
	s, err := sandbox.Build(&bare, sandbox.Options{Argv: []string{lnkBin, "sandbox", "probe"}, ExtraExec: []string{lnkBin}, InitPath: testenv.Bin(t, "lnk-init")})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(spec)
	var out, errb bytes.Buffer
	if code, err := s.Start(bytes.NewReader(in), &out, &errb, nil); err != nil || code != 0 {
		t.Fatalf("probes: %d %v %s", code, err, errb.String())
	}
	var got []probe.Result
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != len(want) {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, r := range got {
		if r.Got != probe.Open {
			t.Errorf("without the protection, %s: %s, want open", r.Name, r.Got)
		}
	}
	if !probe.Failed(got) {
		t.Fatal("check would pass without the protection")
	}
}
