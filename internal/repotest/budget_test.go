package repotest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// budget lists, for each binary under cmd/, the packages it must never
// link. A broker that cannot link a package cannot be made to use it.
var budget = map[string][]string{
	"lnk-fsbroker":   {"net", "net/http", "os/exec"},
	"lnk-askbroker":  {"net", "net/http"},
	"lnk-keybroker":  {"os/exec", "net/http", "net"},
	"lnk-netbroker":  {"os/exec"},
	"lnk-init":       {"net/http", "crypto/tls"},
	"lnk-mcp-remote": {"os/exec"},
	// lnk-toolhub starts one server and listens on one unix socket: no HTTP, no TLS, no sandbox or keys.
	"lnk-toolhub": {"net/http", "crypto/tls", "lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/kernel/sandbox"},
	// lnk-file-tool is what the file tool's sandbox runs: apply alone, no
	// MCP server, no network, no process of its own to start (serve is
	// an exec of lnk-file-serve).
	"lnk-file-tool": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "github.com/seccomp/libseccomp-golang",
		"lnk.dev/lnk/services/filetool", "github.com/modelcontextprotocol/go-sdk/mcp", "net", "net/http", "os/exec"},
	// lnk-file-serve holds no key and builds no sandbox (Link's command does).
	"lnk-file-serve": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "github.com/seccomp/libseccomp-golang"},
}

func TestDependencyBudget(t *testing.T) {
	root := testenv.RepoRoot(t)
	for bin, banned := range budget {
		if _, err := os.Stat(filepath.Join(root, "cmd", bin)); err != nil {
			continue // the binary has not landed yet
		}
		t.Run(bin, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "./cmd/"+bin)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			deps := map[string]bool{}
			for _, l := range strings.Fields(string(out)) {
				deps[l] = true
			}
			for _, b := range banned {
				if deps[b] {
					t.Errorf("%s links %s, which its budget forbids", bin, b)
				}
			}
		})
	}
}

// TestEveryBinaryHasABudget keeps the table honest as binaries land.
func TestEveryBinaryHasABudget(t *testing.T) {
	root := testenv.RepoRoot(t)
	ents, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "lnk-") {
			if _, ok := budget[e.Name()]; !ok {
				t.Errorf("cmd/%s has no dependency budget in budget_test.go", e.Name())
			}
		}
	}
}
