package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// TestSealedSecretWithHostNetworkRefused: an agent granted a sealed
// secret, with [network] mode = "host", has no proxy to add it, so its
// run is refused (exit 3) before its command starts, saying why, with
// both commands that would let it run as hints, and logged once; each
// hint, followed, lets the same run go (the positive controls).
func TestSealedSecretWithHostNetworkRefused(t *testing.T) {
	lnkBin(t)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-keybroker")
	testenv.Bin(t, "lnk-netbroker")
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "main")
	run(cliSecret+"\n", 0, "secret", "create", "GITHUB_TOKEN", "--internet-host", "api.github.com")
	run("", 0, "secret", "add", "GITHUB_TOKEN", "--agent", "main")
	run("", 0, "agent", "allow", "main", "--command", "echo", "--network-mode", "host")

	refused := func() {
		t.Helper()
		got := run("", 3, "sandbox", "run", "--agent", "main", "--", "echo", "ran")
		for _, want := range []string{
			`lnk: refused: agent main holds sealed secrets (GITHUB_TOKEN) and [network] mode = "host" leaves it no proxy`,
			"  hint: lnk agent deny main --network-mode host\n",
			"  hint: lnk secret remove GITHUB_TOKEN --agent main\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "ran") || strings.Contains(got, cliSecret) {
			t.Errorf("the command ran, or the value was shown:\n%s", got)
		}
	}
	refused()
	log, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if n := strings.Count(string(log), "no proxy to add them"); err != nil || n != 1 {
		t.Errorf("the refusal is logged %d times (%v):\n%s", n, err, log)
	}

	// The first hint: behind its proxy, which adds the secret.
	run("", 0, "agent", "deny", "main", "--network-mode", "host")
	if got := run("", 0, "sandbox", "run", "--agent", "main", "--", "echo", "ran"); !strings.Contains(got, "ran") {
		t.Fatalf("behind its proxy: %s", got)
	}
	run("", 0, "agent", "allow", "main", "--network-mode", "host")
	refused()
	// The second hint: the secret taken from the agent.
	run("", 0, "secret", "remove", "GITHUB_TOKEN", "--agent", "main")
	if got := run("", 0, "sandbox", "run", "--agent", "main", "--", "echo", "ran"); !strings.Contains(got, "ran") {
		t.Fatalf("without the secret: %s", got)
	}
}
