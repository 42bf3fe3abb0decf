package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// TestLogLinesAreOneLine: the real service's log takes a document's name
// and a caller's words through internal/textsafe.Line: a link named with
// "\r", U+2028, U+2029 and an escape sequence is left out in one line of
// the log, without any of them, so no name forges a line or hides one on
// the owner's terminal. The control: a plain link's refusal is logged
// with its name as it is, and a plain document is found.
func TestLogLinesAreOneLine(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := t.TempDir()
	mem := home + "/Link/Agents/ada/Home/memory"
	os.MkdirAll(mem, 0o700)
	os.MkdirAll(home+"/Link/Agents/ada/Agent", 0o700)
	for _, d := range []string{home + "/Link", home + "/Link/Agents"} {
		os.Chmod(d, 0o700)
	}
	if err := os.WriteFile(filepath.Join(mem, "plain.md"), []byte("persimmon"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostile := "evil\rlnk-memory: forged\u2028x\u2029y\x1b[2Kz.md"
	for _, name := range []string{hostile, "plain-link.md"} {
		if err := os.Symlink("plain.md", filepath.Join(mem, name)); err != nil {
			t.Fatal(err)
		}
	}
	cs, out := startServe(t, home)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"words": "persimmon"}})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "memory/plain.md") {
		t.Fatalf("search: %v %v\n%s", res, err, out.String())
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "memory/no\rlnk-memory: forged\u2028\x1b[2K.md"}})
	if err != nil || !res.IsError {
		t.Fatalf("a read of no document: %v %v", res, err)
	}
	logPath := home + "/Link/Agents/.memory/owner/memory.log"
	var log string
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		log = string(b)
		if strings.Count(log, "left out") >= 2 && strings.Contains(log, "refused read") || time.Now().After(end) {
			break
		}
	}
	for _, bad := range []string{"\r", "\u2028", "\u2029", "\x1b"} {
		if strings.Contains(log, bad) {
			t.Errorf("the log holds %q:\n%q", bad, log)
		}
	}
	var leftOut, forged []string
	for _, l := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		if !strings.HasPrefix(l, "lnk-memory: ") {
			t.Errorf("a line not the service's: %q", l)
		}
		if strings.Contains(l, "left out") {
			leftOut = append(leftOut, l)
		}
		if strings.HasPrefix(l, "lnk-memory: forged") {
			forged = append(forged, l)
		}
	}
	if len(forged) != 0 {
		t.Errorf("a name forged a line: %q", forged)
	}
	if len(leftOut) != 2 || !strings.Contains(log, "memory/evillnk-memory: forgedxy[2Kz.md left out") || !strings.Contains(log, "memory/plain-link.md left out") {
		t.Errorf("the links' refusals, one line each, the plain name as it is: %q\n%q", leftOut, log)
	}
	if !strings.Contains(log, "refused read for agent") {
		t.Errorf("the read's refusal is not logged:\n%q", log)
	}
}
