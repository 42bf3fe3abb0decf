package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// ownerHome is HOME as the test started: go build keeps its caches there.
var ownerHome = os.Getenv("HOME")

// git runs git in the repository and returns its output's one line.
func git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s (the test reads the commit of the checkout it runs in): %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

type versionJSON struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

func lnkVersion(t *testing.T, lnk string) versionJSON {
	t.Helper()
	out, err := exec.Command(lnk, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", lnk, err)
	}
	var v versionJSON
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return v
}

// TestVersionNamesTheCommitItWasBuiltFrom builds lnk with the Makefile
// (make build, which sets the commit at link time) and with a plain go
// build (where Go's vcs stamp is the fallback), and reads back from each
// the commit of the checkout the test runs in.
func TestVersionNamesTheCommitItWasBuiltFrom(t *testing.T) {
	root := testenv.RepoRoot(t)
	head := git(t, "rev-parse", "HEAD")
	describe := git(t, "describe", "--always", "--dirty")
	bin := t.TempDir()
	env := append(os.Environ(), "HOME="+ownerHome)

	mk := exec.Command("make", "-s", "build", "BIN="+bin, "BINARIES=lnk")
	mk.Dir, mk.Env = root, env
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	v := lnkVersion(t, filepath.Join(bin, "lnk"))
	if v.Commit != head || v.Version != describe || v.Modified != strings.HasSuffix(describe, "-dirty") || v.Go != runtime.Version() {
		t.Errorf("make build's lnk says %+v; the checkout is %s (%s), built by %s", v, head, describe, runtime.Version())
	}

	// Go stamps no vcs.revision in a git worktree (its .git is a file), so
	// the fallback is read from a clone of the checkout's commit, built
	// -trimpath so that the build cache serves it.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--shared", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	gb := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", filepath.Join(bin, "lnk-plain"), "./cmd/lnk")
	gb.Dir, gb.Env = clone, append(env, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := gb.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	v = lnkVersion(t, filepath.Join(bin, "lnk-plain"))
	if v.Commit != head || v.Version != head[:12] || v.Modified {
		t.Errorf("go build's lnk says %+v; the clone is %s, unmodified", v, head)
	}
}
