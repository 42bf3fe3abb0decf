package toolbridge

import (
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Start binds ~/.lnk/sandbox/bridge/<sandbox>.sock (0600 in 0700
// folders), serves only the route holding its secret, and Close removes
// the socket.
func TestStartServesOnlyItsSecretRoute(t *testing.T) {
	home := testenv.Home(t)
	b := &Bridge{Agent: "ada", Grants: map[string]caps.Tool{"test": {AskNone: true}}, Defs: tooldef.Store{Home: home}}
	name := SandboxName("ada")
	if !strings.HasPrefix(name, "ada-") || SandboxName("ada") == name {
		t.Fatalf("sandbox names: %q", name)
	}
	r, err := Start(home, name, b)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			r.Close()
		}
	})
	if want := filepath.Join(home, ".lnk", "sandbox", "bridge", name+".sock"); r.Socket != want {
		t.Fatalf("socket %s, want %s", r.Socket, want)
	}
	fi, err := os.Lstat(r.Socket)
	if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v", fi.Mode(), err)
	}
	for _, d := range []string{".lnk", ".lnk/sandbox", ".lnk/sandbox/bridge"} {
		if fi, err := os.Stat(filepath.Join(home, d)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, fi.Mode(), err)
		}
	}
	route := r.Route()
	if !strings.HasPrefix(route, "/_link/s/") || len(route) < len("/_link/s//mcp/")+32 {
		t.Fatalf("route %q holds no secret", route)
	}
	wrong := "/_link/s/" + strings.Repeat("0", 32) + "/mcp/test"
	for path, want := range map[string]int{wrong: 404, "/mcp/test": 404, route + "test": 400} {
		if got := postStatus(t, r.Socket, path); got != want {
			t.Errorf("POST %s: %d, want %d", strings.Replace(path, route, "<route>", 1), got, want)
		}
	}
	r.Close()
	closed = true
	if _, err := os.Lstat(r.Socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket outlived Close: %v", err)
	}
}

// postStatus posts an empty body (a request the bridge refuses as no
// JSON-RPC message once the route is right) and returns the status.
func postStatus(t *testing.T, sock, path string) int {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hc := &http.Client{Transport: &http.Transport{Dial: func(string, string) (net.Conn, error) { return c, nil }}}
	resp, err := hc.Post("http://127.0.0.1"+path, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A link anywhere on the way to the bridge's folder, or a folder others
// can reach, is refused; a name that is not one path element too.
func TestStartRefusesLinksLooseFoldersAndBadNames(t *testing.T) {
	home := testenv.Home(t)
	b := &Bridge{Defs: tooldef.Store{Home: home}}
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".lnk", "sandbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(home, ".lnk", "sandbox", "bridge")); err != nil {
		t.Fatal(err)
	}
	if r, err := Start(home, "x-1", b); err == nil || !strings.Contains(err.Error(), "link") {
		if r != nil {
			r.Close()
		}
		t.Fatalf("a linked bridge folder: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("something was made through the link: %v", ents)
	}
	os.Remove(filepath.Join(home, ".lnk", "sandbox", "bridge"))
	if err := os.Mkdir(filepath.Join(home, ".lnk", "sandbox", "bridge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(home, "x-2", b); err == nil || !strings.Contains(err.Error(), "0700") {
		t.Fatalf("a folder others can reach: %v", err)
	}
	for _, n := range []string{"", ".", "..", "a/b", "a\x00"} {
		if _, err := Start(home, n, b); err == nil {
			t.Errorf("name %q was taken", n)
		}
	}
}
