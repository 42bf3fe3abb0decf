package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// The test binary run inside a sandbox as `web-client URL...`: the
// harness's side, reaching the web tool through the sandbox's proxy.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "web-client" {
		os.Exit(runWebClient(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "http-get" {
		os.Exit(runHTTPGet())
	}
	os.Exit(m.Run())
}

// runWebClient connects to $LNK_TOOL_WEB with the go-sdk client, lists
// the tool's calls and fetches each URL, printing one line per step.
func runWebClient(urls []string) int {
	endpoint := os.Getenv("LNK_TOOL_WEB")
	if endpoint == "" {
		fmt.Println("no LNK_TOOL_WEB")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		fmt.Println("connect-error=" + err.Error())
		return 1
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fmt.Println("list-error=" + err.Error())
		return 1
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Println("tools=" + strings.Join(names, ","))
	for i, u := range urls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": u}})
		switch {
		case err != nil:
			fmt.Printf("fetch%d-error=%s\n", i, err)
		default:
			fmt.Printf("fetch%d=%v %s\n", i, res.IsError, strings.ReplaceAll(res.Content[0].(*mcp.TextContent).Text, "\n", " | "))
		}
	}
	return 0
}

// TestThroughTheProxysToolRoute: the web tool added as the owner adds it
// (`lnk sandbox tool add web -- lnk-web …`) and granted to a real `lnk
// sandbox run` (--tool web): a go-sdk client inside reaches it only
// through the sandbox's proxy, lists and calls it; a loopback page named
// by --private-host comes back as the web's words, a private address is
// refused with its reason, and the audit log names each call, never its
// URL.
func TestThroughTheProxysToolRoute(t *testing.T) {
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
	home := testenv.Home(t)
	lnk, web := testenv.Bin(t, "lnk"), testenv.Bin(t, "lnk-web")
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	s := page(t)
	add := exec.Command(lnk, "sandbox", "tool", "add", "web", "--", web, "--private-host", "127.0.0.1")
	add.Env = append(os.Environ(), "HOME="+home, "PATH=/usr/bin:/bin")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("tool add: %v\n%s", err, out)
	}
	client := copySelf(t, home)
	pageURL := s.URL + "/secret-path-5e1d"
	cmd := exec.Command(lnk, "sandbox", "run", "--read", filepath.Dir(client), "--command", client,
		"--tool", "web", "--allow", "fetch", "--", client, "web-client", pageURL, "http://10.0.0.1/")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("sandbox run: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	lines := map[string]string{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		lines[k] = v
	}
	t.Logf("client: %v", lines)
	if lines["tools"] != "fetch,search" {
		t.Fatalf("tools = %q; all: %v\nstderr: %s", lines["tools"], lines, stderr.String())
	}
	if f := lines["fetch0"]; !strings.HasPrefix(f, "false ") || !strings.Contains(f, "Title: ` Peer page `") || !strings.Contains(f, "not by your owner") {
		t.Errorf("the loopback page: %q", f)
	}
	if f := lines["fetch1"]; !strings.HasPrefix(f, "true ") || !strings.Contains(f, "private network address") {
		t.Errorf("the private address: %q", f)
	}
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if n := strings.Count(log, `"request":"mcp fetch"`); n != 2 || !strings.Contains(log, "tool web") {
		t.Errorf("the audit log names %d fetch calls, want 2, on the web tool's route:\n%s", n, log)
	}
	if strings.Contains(log, "secret-path-5e1d") {
		t.Errorf("the audit log holds the call's URL:\n%s", log)
	}
}

// copySelf copies the test binary into home/bin, a folder the sandbox is
// granted to read, so it runs there as the client.
func copySelf(t *testing.T, home string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "bin")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(dir, "client")
	out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// runHTTPGet is the test binary as `http-get`: for each URL line on
// stdin, a plain http.Get of it read whole, answered on stdout as its
// length (8 bytes, big-endian) and its body.
func runHTTPGet() int {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	for in.Scan() {
		resp, err := http.Get(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(body)))
		out.Write(n[:])
		out.Write(body)
		if err := out.Flush(); err != nil {
			return 1
		}
	}
	return 0
}
