package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// tool add --url runs Link's own lnk-mcp-remote, named by its absolute
// path beside lnk (never looked up on the owner's saved PATH, where
// another program of that name could stand), and keeps each --header
// only in the definition's environment, as LNK_MCP_HEADER_<n>: never on
// the server's command line.
func TestToolAddURLRunsLinksOwnClientWithHeadersInItsEnvironment(t *testing.T) {
	lnk := lnkBin(t) // built before HOME moves
	remote := testenv.Bin(t, "lnk-mcp-remote")
	if filepath.Dir(remote) != filepath.Dir(lnk) {
		t.Fatalf("lnk-mcp-remote (%s) is not beside lnk (%s)", remote, lnk)
	}
	home := testenv.Home(t)
	t.Setenv("PATH", t.TempDir()) // the snapshot's PATH holds no lnk-mcp-remote
	const token = "tok-5c1e-not-on-argv"
	out, errOut, code := lnkRun(t, nil, "sandbox", "tool", "add", "web", "--url", "https://mcp.example.com/mcp",
		"--header", "Authorization: Bearer "+token, "--header", "X-Team: blue")
	if code != 0 {
		t.Fatalf("tool add --url: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out+errOut, token) {
		t.Errorf("tool add printed the header's value: %q %q", out, errOut)
	}
	store := tooldef.Store{Home: home}
	d, err := store.Load("web")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Destroy()
	if want := []string{remote, "https://mcp.example.com/mcp"}; strings.Join(d.Command, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("the command is %q, want %q (Link's own client by its absolute path)", d.Command, want)
	}
	for k, want := range map[string]string{"LNK_MCP_HEADER_1": "Authorization: Bearer " + token, "LNK_MCP_HEADER_2": "X-Team: blue"} {
		if v := d.Env[k]; v == nil || string(v.Bytes()) != want {
			t.Errorf("%s is not %q", k, want)
		}
	}
	// In the file, the values stand in the environment alone.
	b, err := os.ReadFile(store.Path("web"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for k, v := range f {
		if k != "env" && (strings.Contains(string(v), token) || strings.Contains(string(v), "X-Team")) {
			t.Errorf("a header's value stands in the definition's %q: %s", k, v)
		}
	}
}
