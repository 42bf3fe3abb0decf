package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// lnkRun runs the built lnk with stdin and returns stdout, stderr and its
// exit code.
func lnkRun(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(lnkBin(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// lnkBin is the built lnk. Tests call it before testenv.Home: a build
// under a temporary HOME would start from an empty Go cache.
func lnkBin(t *testing.T) string { return testenv.Bin(t, "lnk") }

const cliSecret = "sk-cli-test-value-9f8e7d"

// TestSecretCommands keeps a secret from stdin, grants it by agent ID,
// lists it, and removes it; no output ever holds the value.
func TestSecretCommands(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	var seen strings.Builder
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		seen.WriteString(out + errs)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "main")
	run(cliSecret+"\n", 0, "secret", "create", "GITHUB_TOKEN", "--internet-host", "api.github.com")
	run("other\n", 3, "secret", "create", "GITHUB_TOKEN")
	run("", 2, "secret", "create", "EMPTY")
	run("x\n", 2, "secret", "create", "lower_case")
	run("", 0, "secret", "add", "GITHUB_TOKEN", "--agent", "main")
	run("", 4, "secret", "add", "GITHUB_TOKEN", "--agent", "nobody")
	run("", 4, "secret", "add", "MISSING", "--agent", "main")
	out := run("", 0, "secret", "list", "--json")
	var listed []struct {
		Name         string   `json:"name"`
		Sealed       bool     `json:"sealed"`
		InternetHost string   `json:"internet_host"`
		Agents       []string `json:"agents"`
		AgentNames   []string `json:"agent_names"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if len(listed) != 1 || !listed[0].Sealed || listed[0].InternetHost != "api.github.com" || len(listed[0].Agents) != 1 || listed[0].AgentNames[0] != "main" {
		t.Fatalf("list --json: %+v", listed)
	}
	// An agent made again under the same name holds nothing.
	run("", 0, "agent", "delete", "main")
	run("", 0, "agent", "create", "main")
	out = run("", 0, "secret", "list")
	if !strings.Contains(out, "id:"+listed[0].Agents[0]) || strings.Contains(out, " main") {
		t.Fatalf("list after main was made again:\n%s", out)
	}
	run("", 4, "secret", "remove", "GITHUB_TOKEN", "--agent", "main")
	run("", 0, "secret", "remove", "GITHUB_TOKEN")
	run("", 4, "secret", "remove", "GITHUB_TOKEN")
	if strings.Contains(seen.String(), cliSecret) {
		t.Fatal("an output of lnk secret holds the value")
	}
	st, err := os.Stat(filepath.Join(home, ".lnk", "secrets.toml"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secrets.toml: %v %v", st, err)
	}
}

// TestSecretListNamesLegacyKeys: a key where an older layout kept it is
// named by list, with how to give it again, and left in place.
func TestSecretListNamesLegacyKeys(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	old := filepath.Join(home, "Link", "Agent")
	os.MkdirAll(old, 0o700)
	os.WriteFile(filepath.Join(old, "harness.toml"), []byte("model_key = \"sk-legacy-key\"\n"), 0o600)
	out, errs, code := lnkRun(t, nil, "secret", "list")
	if code != 0 || !strings.Contains(errs, filepath.Join(old, "harness.toml")) || !strings.Contains(errs, "lnk secret create") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out+errs, "sk-legacy-key") {
		t.Fatal("list read the legacy key")
	}
	if _, err := os.Stat(filepath.Join(old, "harness.toml")); err != nil {
		t.Fatal("list removed the legacy key")
	}
}

// TestSecretCreateHeaders: --header names the request headers a sealed
// secret goes in, read back from secrets.toml and from list --json;
// without it the grant says Authorization; a header describing the
// request, or one for a secret kept plain, is refused with a hint.
func TestSecretCreateHeaders(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	if out, errs, code := lnkRun(t, []byte(cliSecret+"\n"), "secret", "create", "AGENT_MAIN_MODEL_KEY", "--internet-host", "api.anthropic.com", "--header", "x-api-key"); code != 0 || !strings.Contains(out, "sealed to api.anthropic.com, in x-api-key") {
		t.Fatalf("create --header: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := lnkRun(t, []byte(cliSecret+"\n"), "secret", "create", "GITHUB_TOKEN", "--internet-host", "api.github.com"); code != 0 || !strings.Contains(out, "in Authorization") {
		t.Fatalf("create: exit %d\n%s%s", code, out, errs)
	}
	for _, args := range [][]string{
		{"secret", "create", "PLAIN_ONE", "--header", "X-Api-Key"},
		{"secret", "create", "HOSTY", "--internet-host", "api.example.com", "--header", "Host"},
		{"secret", "create", "SPACEY", "--internet-host", "api.example.com", "--header", "X Api"},
	} {
		out, errs, code := lnkRun(t, []byte("v\n"), args...)
		if code != 2 || !strings.Contains(errs, "hint: lnk secret create") || strings.Count(strings.TrimSpace(errs), "\n") > 2 {
			t.Errorf("lnk %s: exit %d, want 2 with a hint\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	raw, err := os.ReadFile(filepath.Join(home, ".lnk", "secrets.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "internet_host = \"api.anthropic.com\"\nheaders = [\"X-Api-Key\"]\n") || strings.Count(string(raw), "headers") != 1 ||
		strings.Contains(string(raw), "PLAIN_ONE") || strings.Contains(string(raw), "HOSTY") {
		t.Fatalf("secrets.toml:\n%s", raw)
	}
	out, errs, code := lnkRun(t, nil, "secret", "list", "--json")
	var listed []struct {
		Name    string   `json:"name"`
		Headers []string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil {
		t.Fatalf("list --json: %v\n%s%s", err, out, errs)
	}
	if len(listed) != 2 || listed[0].Name != "AGENT_MAIN_MODEL_KEY" || strings.Join(listed[0].Headers, ",") != "X-Api-Key" || strings.Join(listed[1].Headers, ",") != "Authorization" {
		t.Fatalf("list --json: %+v", listed)
	}
	if out, _, _ := lnkRun(t, nil, "secret", "list"); !strings.Contains(out, "IN HEADERS") || !strings.Contains(out, "X-Api-Key") {
		t.Fatalf("list:\n%s", out)
	}
}
