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

// --header 'Name:' reads the header's value from stdin (the terminal,
// echo off, where there is one), as --env K does, so the token stands on
// no command line at all, lnk's own included; it is kept whole, "Name:
// value", in LNK_MCP_HEADER_1 and printed nowhere.
func TestToolAddURLReadsAHeadersValueFromStdin(t *testing.T) {
	lnkBin(t)
	testenv.Bin(t, "lnk-mcp-remote")
	home := testenv.Home(t)
	const token = "tok-read-from-stdin-77"
	out, errOut, code := lnkRun(t, []byte(token+"\n"), "sandbox", "tool", "add", "web", "--url", "https://mcp.example.com/mcp",
		"--header", "Authorization:")
	if code != 0 {
		t.Fatalf("tool add --header 'Authorization:': %d %q %q", code, out, errOut)
	}
	if strings.Contains(out+errOut, token) {
		t.Errorf("tool add printed the header's value: %q %q", out, errOut)
	}
	d, err := (tooldef.Store{Home: home}).Load("web")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Destroy()
	if v := d.Env["LNK_MCP_HEADER_1"]; v == nil || string(v.Bytes()) != "Authorization: "+token {
		t.Errorf("LNK_MCP_HEADER_1 does not hold the header read from stdin")
	}
	if _, _, code := lnkRun(t, []byte("tok\rX-Evil: 1\n"), "sandbox", "tool", "add", "web3", "--url", "https://mcp.example.com/mcp", "--header", "Authorization:"); code == 0 {
		t.Error("a header value read with a carriage return in it was taken")
	}
	for _, bad := range []string{": x", "Two words: x", "no colon", "A: x\r\nB: y"} {
		if _, _, code := lnkRun(t, nil, "sandbox", "tool", "add", "web2", "--url", "https://mcp.example.com/mcp", "--header", bad); code == 0 {
			t.Errorf("--header %q was taken", bad)
		}
	}
}
