package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// GoHello builds a Go hello-world, static as lnk, lnk-init and
// lnk-file-tool are built, into t's temporary folder and returns its
// path. The start benchmarks time it beside Link: what one Go program's
// start costs on this machine, counted once for each Go program Link
// starts in series, is the floor no Go launcher or first stage goes below.
func GoHello(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", out, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+ownerHome, "CGO_ENABLED=0", "GO111MODULE=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build a Go hello-world: %v\n%s", err, msg)
	}
	return out
}
