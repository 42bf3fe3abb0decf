package filetool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// folders is a files folder with work/ in it, and a folder beside it for
// what the tests keep outside.
type folders struct{ files, aside string }

func newFolders(t testing.TB) folders {
	t.Helper()
	base := t.TempDir()
	f := folders{files: filepath.Join(base, "files"), aside: filepath.Join(base, "aside")}
	for _, d := range []string{filepath.Join(f.files, "work"), f.aside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// connect starts `lnk-file-tool serve flags -- command...` and connects
// the official go-sdk client to it over stdio; both end with the test.
func connect(t testing.TB, flags []string, command ...string) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectCmd(t, flags, command...)
	return cs
}

// connectCmd is connect, also returning serve's process.
func connectCmd(t testing.TB, flags []string, command ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	args := append(append([]string{"serve"}, flags...), "--")
	cmd := exec.Command(testenv.Bin(t, "lnk-file-tool"), append(args, command...)...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "lnk-test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	return cs, cmd
}

// call calls a tool and returns its text and whether it was an error.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// ok calls a tool that must succeed and decodes its answer.
func ok(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: %s", name, args, text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s: not JSON: %s", name, text)
	}
	return m
}

// waitFor polls cond until it holds, for at most 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
