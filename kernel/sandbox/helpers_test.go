package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
)

// requireSandbox skips (or under LNK_REQUIRE_SANDBOX=1 fails) where this
// machine cannot build the sandbox.
func requireSandbox(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
}

// world is a temporary HOME with a granted folder, a secret in ~/.ssh
// and a ~/.lnk.
type world struct {
	home, data string
}

func newWorld(t *testing.T) world {
	t.Helper()
	requireSandbox(t)
	home := testenv.Home(t)
	w := world{home: home, data: filepath.Join(home, "data")}
	for _, d := range []string{w.data, filepath.Join(home, ".ssh"), filepath.Join(home, ".lnk")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(w.data, "f"), "granted-content")
	write(t, filepath.Join(home, ".ssh", "id_test"), "secret-key")
	write(t, filepath.Join(home, ".lnk", "settings"), "secret-settings")
	return w
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func compile(t *testing.T, w world, g caps.Grants) *caps.Compiled {
	t.Helper()
	c, err := caps.CompileFlags(w.home, w.home, g)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return c
}

// run builds and starts a sandbox, returning its exit code and output.
func run(t *testing.T, c *caps.Compiled, opt sandbox.Options, argv ...string) (int, string, string) {
	t.Helper()
	opt.Argv = argv
	if opt.InitPath == "" {
		opt.InitPath = testenv.Bin(t, "lnk-init")
	}
	s, err := sandbox.Build(c, opt)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var out, errb bytes.Buffer
	code, err := s.Start(nil, &out, &errb, nil)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return code, out.String(), errb.String()
}
