package filetool

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcpstdio"
	"lnk.dev/lnk/internal/stdpipe"
	"lnk.dev/lnk/internal/testenv"
)

// sdkOnly is a transport Serve does not know as its own: every message
// goes to the go-sdk.
type sdkOnly struct{ mcp.Transport }

// stdioPipes is Link's stdio transport over two pipes, with the client's
// ends (it writes to inChild, reads from outChild), which the caller closes.
func stdioPipes(t testing.TB) (tr mcp.Transport, inChild, outChild *os.File) {
	t.Helper()
	inChild, inP, err := stdpipe.ForChild(false)
	if err != nil {
		t.Fatal(err)
	}
	outChild, outP, err := stdpipe.ForChild(true)
	if err != nil {
		t.Fatal(err)
	}
	return mcpstdio.New(inP, outP), inChild, outChild
}

// serveLines runs Serve on pipes, with the fast path or without, and
// returns the client's ends.
func serveLines(t *testing.T, o Offer, sb *Sandboxed, fast bool) (in *os.File, out *bufio.Reader) {
	t.Helper()
	tr, inChild, outChild := stdioPipes(t)
	if !fast {
		tr = sdkOnly{tr}
	}
	done := make(chan struct{})
	go func() { Serve(context.Background(), o, sb, tr); close(done) }()
	t.Cleanup(func() {
		inChild.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not end with its client")
		}
		outChild.Close()
	})
	return inChild, bufio.NewReader(outChild)
}

// TestFastCallsAreTheGoSDKs: the same lines, sent to serve with the fast
// path and without it (the go-sdk answering every one), are answered with
// the same bytes — the plain calls the fast path takes, and every near
// miss it leaves to the go-sdk — before and after notifications/initialized.
func TestFastCallsAreTheGoSDKs(t *testing.T) {
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	os.MkdirAll(filepath.Join(files, "work"), 0o700)
	os.WriteFile(filepath.Join(files, "a.txt"), []byte("<one> & \"two\"\n\u2028\tthree\n"), 0o600)
	sb := &Sandboxed{Argv: []string{testenv.Bin(t, "lnk-file-tool"), "apply", "--files", files, "--write", "work"}}
	o := Offer{NoFind: true}
	var ins [2]*os.File
	var outs [2]*bufio.Reader
	ins[0], outs[0] = serveLines(t, o, sb, true)
	ins[1], outs[1] = serveLines(t, o, sb, false)
	t.Cleanup(func() { sb.Close() })

	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	read := `{"name":"read","arguments":{"path":"a.txt"}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		call("2", read), // before notifications/initialized: the go-sdk's
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call("3", read),
		call(`"s-4"`, read),
		call("-5", read),
		call("0", read),
		call(" 6 ", ` { "name" : "read" , "arguments" : { "path" : "a.txt" } } `),
		`{"params":` + read + `,"method":"tools/call","id":7,"jsonrpc":"2.0"}`,
		call("8", `{"name":"read","arguments":{"path":"../a.txt"}}`),
		call("9", `{"name":"list"}`),
		call("10", `{"name":"list","arguments":null}`),
		call("11", `{"name":"list","arguments":[1]}`),
		call("12", `{"name":"read","arguments":{"path":"nope.txt"}}`),
		call("13", `{"name":"write","arguments":{"path":"elsewhere/b.txt","content":"x"}}`),
		call("29", `{"arguments":{"path":"a.txt"},"name":"read"}`),
		// near misses, each the go-sdk's to answer
		call(`"a\u0041"`, read),
		call("9007199254740993", read),
		call("14.0", read),
		call("1e1", read),
		call("15", `{"name":"re\u0061d","arguments":{"path":"a.txt"}}`),
		call("16", `{"name":"nope","arguments":{}}`),
		call("17", `{"name":"find","arguments":{"name":"*"}}`),
		call("18", `{"name":"read","arguments":{"path":"a.txt"},"extra":1}`),
		call("19", `{"name":"read","arguments":{"path":"a.txt"},"_meta":{"progressToken":"p"}}`),
		call("20", `{"Name":"read","arguments":{"path":"a.txt"}}`),
		call("21", `{"name":"read","name":"list"}`),
		`{"jsonrpc":"2.0","id":22,"id":23,"method":"tools/call","params":` + read + `}`,
		`{"jsonrpc":"2.0","id":24,"method":"tools/call","params":` + read + `,"extra":true}`,
		call("25", `{"name":"read","arguments":{"path":"a.txt","deep":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}}`),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","id":26,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":27,"method":"tools/list"}`,
		call("28", read),
	}
	for _, line := range lines {
		var got [2]string
		for i := range 2 {
			if _, err := ins[i].WriteString(line + "\n"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(line, `"id"`) {
				continue // a notification: no answer
			}
			b, err := outs[i].ReadString('\n')
			if err != nil {
				t.Fatalf("%s: no answer: %v", line, err)
			}
			got[i] = b
		}
		if got[0] != got[1] {
			t.Errorf("%s:\nwith the fast path: %s\nthe go-sdk's:       %s", line, got[0], got[1])
		}
	}
}

// TestFastCallCancelled: a running call the client cancels
// (notifications/cancelled) ends its sandboxed process and is answered
// with why, with the fast path as without it.
func TestFastCallCancelled(t *testing.T) {
	var got [2]string
	for i, fast := range []bool{true, false} {
		started := filepath.Join(t.TempDir(), "started")
		sb := &Sandboxed{Argv: []string{"/bin/sh", "-c", "read call; : >" + started + "; exec sleep 60"}} // never answers
		t.Cleanup(func() { sb.Close() })
		in, out := serveLines(t, Offer{}, sb, fast)
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		} {
			if _, err := in.WriteString(line + "\n"); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(line, `"initialize"`) {
				if _, err := out.ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Contains(line, `"tools/call"`) {
				waitForFile(t, started) // the call runs: cancel it now, not while it waits to
			}
		}
		b, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("fast %v: no answer: %v", fast, err)
		}
		got[i] = b
	}
	if !strings.Contains(got[0], `"isError":true`) || !strings.Contains(got[0], "cancelled") || got[0] != got[1] {
		t.Errorf("a cancelled call answered\nwith the fast path: %s\nthe go-sdk's:       %s", got[0], got[1])
	}
}

// waitForFile waits up to 30 s for name to exist.
func waitForFile(t *testing.T, name string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", name)
		}
	}
}
