package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// ownerHome is HOME as the test process started, before Home moved it:
// go build keeps its caches there, so a build after Home is not cold.
var ownerHome = os.Getenv("HOME")

var (
	buildMu  sync.Mutex
	buildDir string
	built    = map[string]string{}
)

// Bin returns the path of Link's binary name (lnk, lnk-fsbroker, …). With
// LNK_BIN set (make test sets it to the bin/ it has just built) it is
// taken from there; otherwise it is built once per test process from this
// checkout, so a test never runs a stale binary.
func Bin(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv("LNK_BIN"); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("LNK_BIN=%s has no %s (make build makes it): %v", dir, name, err)
		}
		return p
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "lnk-testbin-")
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
		buildDir = d
	}
	out := filepath.Join(buildDir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "lnk.dev/lnk/cmd/"+name)
	cmd.Dir = RepoRoot(t)
	cmd.Env = append(os.Environ(), "HOME="+ownerHome, "XDG_CACHE_HOME=", "XDG_CONFIG_HOME=")
	if static[name] {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, b)
	}
	built[name] = out
	for _, c := range companions[name] {
		buildMu.Unlock()
		Bin(t, c) // into the same folder, where name looks for it
		buildMu.Lock()
	}
	return out
}

// companions are the programs a program runs from its own folder, built
// with it: lnk-file-tool serve becomes lnk-file-serve.
var companions = map[string][]string{"lnk-file-tool": {"lnk-file-serve"}}

// static are the programs built without cgo, as the Makefile's STATIC
// builds them: each is started where only its own file may be executed
// (landlock), so it can have no dynamic loader to run.
var static = map[string]bool{"lnk-init": true, "lnk": true, "lnk-netbroker": true, "lnk-file-tool": true, "lnk-web": true, "lnk-harness": true, "lnk-memory": true}

// RepoRoot is the folder holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: no caller")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}
