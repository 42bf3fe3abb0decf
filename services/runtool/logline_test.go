package runtool

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

// TestRefusalLoggedOnOneLine: a refusal naming what the model wrote (a
// program's name holding a \r, an LS and an escape) is logged by the
// real lnk-run-tool as one printable line, once. The control: a plain name not in [commands] is refused
// and logged the same.
func TestRefusalLoggedOnOneLine(t *testing.T) {
	a := testAgent(t, "")
	cmd := exec.Command(testenv.Bin(t, "lnk-run-tool"), "serve", "--agent", a.Name)
	cmd.Env = append(os.Environ(), "HOME="+a.Home)
	log := &testenv.SyncBuffer{}
	cmd.Stderr = log
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i, prog := range []string{"nosuch\rlnk-run-tool: forged\u2028\x1b[2Kline", "nosuch"} {
		text, isErr := call(t, cs, "main", "command", map[string]any{"argv": []string{prog}})
		if !isErr || !strings.Contains(text, "not in the agent's [commands]") {
			t.Fatalf("%q: %v %q", prog, isErr, text)
		}
		var lines []string
		if !waitFor(5*time.Second, func() bool {
			lines = strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
			return len(lines) == i+1 && lines[0] != ""
		}) {
			t.Fatalf("after %q the log holds %q", prog, log.String())
		}
		if l := lines[i]; strings.ContainsAny(l, "\r\u2028\x1b") || !strings.HasPrefix(l, "lnk-run-tool: refused command") {
			t.Errorf("%q logged as %q", prog, l)
		}
	}
}
