package repotest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// budget lists, for each binary under cmd/, the packages it must never
// link. A broker that cannot link a package cannot be made to use it.
// These bans state the intent; cmd/<binary>/deps.txt (allowlist_test.go)
// lists everything each binary, lnk included, does link.
var budget = map[string][]string{
	"lnk-fsbroker":   {"net", "net/http", "os/exec"},
	"lnk-askbroker":  {"net", "net/http"},
	"lnk-keybroker":  {"os/exec", "net/http", "net"},
	"lnk-webhook":    {"os/exec", "net/http", "net", "crypto/tls"},
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
	// lnk-run-tool holds no key and builds no sandbox (each call is lnk
	// sandbox run's): no key broker, no secret, no sandbox builder, no
	// seccomp.
	"lnk-run-tool": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "github.com/seccomp/libseccomp-golang"},
}

func TestDependencyBudget(t *testing.T) {
	root := testenv.RepoRoot(t)
	graphs := buildGraphs(t, root)
	for bin, banned := range budget {
		g, ok := graphs[bin]
		if !ok {
			continue // the binary has not landed yet
		}
		t.Run(bin, func(t *testing.T) {
			for _, v := range banViolations(g, bin, banned) {
				t.Error(v)
			}
		})
	}
}

// banViolations returns one message for each banned package bin links,
// with the import chain that brings it in.
func banViolations(g graph, bin string, banned []string) []string {
	root := module + "/cmd/" + bin
	deps := g.reach(root)
	var out []string
	for _, b := range banned {
		if deps[b] {
			out = append(out, fmt.Sprintf("%s links %s, which its budget forbids: %s", bin, b, g.chain(root, b)))
		}
	}
	return out
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
