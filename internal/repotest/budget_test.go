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
	// lnk-toolbridge parses what a sandbox sends its tools, confined: it
	// links no kernel (the kernel starts its servers), no key or proxy.
	"lnk-toolbridge": {"lnk.dev/lnk/kernel", "lnk.dev/lnk/kernel/sandbox", "lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/helpers/netbroker"},
	"lnk-toolhub":    {"net/http", "crypto/tls", "lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/kernel/sandbox"},
	// lnk-file-tool is what the file tool's sandbox runs: apply alone, no
	// MCP server, no network, no process of its own to start (serve is
	// an exec of lnk-file-serve).
	"lnk-file-tool": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "github.com/seccomp/libseccomp-golang",
		"lnk.dev/lnk/services/filetool", "github.com/modelcontextprotocol/go-sdk/mcp", "net", "net/http", "os/exec"},
	// lnk-file-serve holds no key and builds no sandbox (Link's command does).
	"lnk-file-serve": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "github.com/seccomp/libseccomp-golang"},
	// lnk-web fetches and searches: it holds no key of Link's, builds no
	// sandbox, and judges addresses by internal/netclass without linking
	// the proxy that shares it. (os/exec comes with the go-sdk's mcp
	// package, as in every MCP server here; lnk-web starts nothing.)
	"lnk-web": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox",
		"github.com/seccomp/libseccomp-golang", "lnk.dev/lnk/helpers/netbroker"},
	// lnk-run-tool builds each call's sandbox in-process
	// (services/sandboxrun, the orchestrator lnk sandbox run --agent
	// calls), so it links the sandbox builder and holds, for a call, what
	// the sandbox is told of its proxy; the kernel starts every broker:
	// no key broker, no libseccomp.
	"lnk-run-tool": {"lnk.dev/lnk/helpers/keybroker", "github.com/seccomp/libseccomp-golang"},
	// lnk-harness runs inside the agent's sandbox and holds no key but its
	// endpoint's (a model's is a placeholder): no key broker, no secret,
	// no sandbox builder, no kernel client, no seccomp.
	"lnk-harness": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "lnk.dev/lnk/kernel/client", "github.com/seccomp/libseccomp-golang"},
	// lnk-memory holds every agent's files and index, never a key, and
	// builds no sandbox (Link's command does). (The MCP SDK links
	// net/http; the embedding model will be reached through it.)
	"lnk-memory": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox", "github.com/seccomp/libseccomp-golang"},
	// lnk-scheduler-tool writes an agent's job files, confined: no key,
	// no secret, no sandbox builder, no kernel client, no endpoint or way
	// in (its jobs fire from the agent's supervisor). (The MCP SDK links
	// os/exec; its seccomp filter refuses exec.)
	"lnk-scheduler-tool": {"lnk.dev/lnk/helpers/keybroker", "lnk.dev/lnk/internal/secret", "lnk.dev/lnk/kernel/sandbox",
		"lnk.dev/lnk/kernel/client", "lnk.dev/lnk/services/wayin", "lnk.dev/lnk/services/harness/endpoint"},
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
