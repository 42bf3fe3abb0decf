package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/extract"
	"lnk.dev/lnk/services/memory/service"
)

// The program, confined, serves its agent over the socket, writes the
// notes through it, and ends seconds after its last session.
func TestServeConfinedAndEndsIdle(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := t.TempDir()
	for p, text := range map[string]string{
		home + "/Link/Agents/ada/Home/memory/doc.md":               "kumquat doc\n",
		home + "/Link/Agents/ada/Agent/chats/main/conversation.md": "kumquat chat\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(home+"/Link/Agents/ada/Home/memory/w.docx", docxOf(`<w:p><w:t>persimmon kumquat</w:t></w:p>`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{home + "/Link", home + "/Link/Agents"} {
		os.Chmod(d, 0o700)
	}
	cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner", "owner", "--agent", "ada=ada", "--idle", "2s")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	sock := home + "/Link/Agents/.memory/owner/run/" + service.SocketName
	var c net.Conn
	var err error
	for i := 0; i < 200; i++ {
		if c, err = net.Dial("unix", sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no socket: %v\n%s", err, out.String())
	}
	fmt.Fprint(c, service.Hello+"ada\n")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := func(tool string, args map[string]any) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{"link.local/thread": "main"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := text("search", map[string]any{"words": "kumquat"}); !strings.Contains(got, "memory/doc.md") || !strings.Contains(got, "chats/main/conversation.md") {
		t.Errorf("search: %q", got)
	}
	// A Word document's text, taken by its own program run again confined.
	if got := text("search", map[string]any{"words": "persimmon"}); !strings.Contains(got, "memory/w.docx") {
		t.Errorf("search in a Word document: %q\n%s", got, out.String())
	}
	if got := text("remember", map[string]any{"text": "tea"}); !strings.HasPrefix(got, "noted") {
		t.Errorf("remember: %q", got)
	}
	if b, _ := os.ReadFile(home + "/Link/Agents/ada/Agent/memory/notes.md"); string(b) != "- tea\n" {
		t.Errorf("notes: %q", b)
	}
	st, err := os.Stat(home + "/Link/Agents/.memory/owner")
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("service folder: %v %v", st, err)
	}
	select {
	case err := <-exited:
		t.Fatalf("ended with a session open: %v\n%s", err, out.String())
	case <-time.After(3 * time.Second):
	}
	cs.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running long after its last session")
	}
}

// The extractor is a child of the program's own: a good document's text
// comes back; a bad one, and one whose text passes 2 MiB, fail alone.
func TestExtractChild(t *testing.T) {
	exe := testenv.Bin(t, "lnk-memory")
	doc := docxOf
	text, err := extract.Run(context.Background(), exe, "docx", doc(`<w:p><w:t>kumquat</w:t></w:p>`))
	if err != nil || text != "kumquat\n" {
		t.Fatalf("%q %v", text, err)
	}
	if _, err := extract.Run(context.Background(), exe, "docx", []byte("not a document")); err == nil || !strings.Contains(err.Error(), "not a Word document") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := extract.Run(context.Background(), exe, "docx", doc(strings.Repeat(`<w:p><w:t>`+strings.Repeat("y", 1000)+`</w:t></w:p>`, 2200))); err == nil {
		t.Error("more than 2 MiB of text was taken")
	}
}

// docxOf is a Word document whose body is body.
func docxOf(body string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.Create("word/document.xml")
	w.Write([]byte(`<w:document xmlns:w="x"><w:body>` + body + `</w:body></w:document>`))
	z.Close()
	return b.Bytes()
}
