package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/service"
)

// copyProgram copies the built program name into dir (0755).
func copyProgram(t *testing.T, name, dir string) {
	t.Helper()
	src, err := os.Open(testenv.Bin(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// The service's model, end to end from the proxy's command: with no
// model on the machine (no lnk beside lnk-memory) the service searches
// by words alone, and a query sharing no word with the note finds
// nothing; with Link's lnk beside it, connect serves the built-in model
// on a loopback port of its choosing for the service alone
// ($LNK_MEMORY_MODEL), and once it answers the same query finds the
// note by meaning. The model is recorded nowhere an agent's start would
// take it from, and ends with the service.
func TestConnectServesTheModelBesideTheService(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 4, "landlock ABI 4 (the model's TCP port)")
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, "Link", "Agents", "ada", "Home", "memory", "fruit.md")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte("A kumquat tree grows by the door.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ada, _ := caps.LoadAgent(home, "ada")
	sock := filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "run", service.SocketName)
	t.Cleanup(func() { service.Stop(context.Background(), sock) })
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	copyProgram(t, "lnk-memory", bin)
	session := func() *mcp.ClientSession {
		cmd := exec.Command(filepath.Join(bin, "lnk-memory"), "connect", "--agent", "ada")
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("ada's session: %v\n%s", err, stderr.String())
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	search := func(cs *mcp.ClientSession, words string) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"words": words}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}

	// No model on the machine: words alone.
	cs := session()
	if got := search(cs, "kumquat"); !strings.Contains(got, "memory/fruit.md") {
		t.Fatalf("by words: %q", got)
	}
	if got := search(cs, "kumquats"); got != "nothing found" {
		t.Fatalf("found by meaning with no model on the machine: %q", got)
	}
	cs.Close()
	if err := service.Stop(context.Background(), sock); err != nil {
		t.Fatal(err)
	}

	// Link's own program beside it: the built-in model, for the service.
	copyProgram(t, "lnk", bin)
	cs = session()
	var got string
	for i := 0; i < 300; i++ {
		if got = search(cs, "kumquats"); strings.Contains(got, "memory/fruit.md") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "memory.log"))
	if !strings.Contains(got, "memory/fruit.md") {
		t.Fatalf("never found by meaning once the model was on the machine: %q\n%s", got, log)
	}
	m := regexp.MustCompile(`the model at (127\.0\.0\.1:\d+) answers`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("memory.log names no model answering:\n%s", log)
	}
	if _, err := os.Lstat(filepath.Join(home, ".lnk", "models", "builtin.json")); err == nil {
		t.Error("the memory model was recorded as the machine's built-in model")
	}
	// The model ends with the service.
	cs.Close()
	if err := service.Stop(context.Background(), sock); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		out, _ := exec.Command("ss", "-Hltn", "src", string(m[1])).Output()
		if len(bytes.TrimSpace(out)) == 0 {
			break
		}
		if i == 100 {
			t.Fatalf("the model still listens on %s after the service ended", m[1])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The service's model server, ended while the service runs, is started
// again on the same socket (keep's retry, 30 s): search falls back to
// words meanwhile and finds by meaning again once it answers. While the
// model is down its port stays held by keep: another program binding it
// (127.0.0.1 or every address, SO_REUSEADDR and SO_REUSEPORT set) fails
// with EADDRINUSE, so no one else is sent the chunks' text; the positive
// control is the new model answering on that same port. Waits on the
// retry itself, so this test takes over half a minute: it runs beside
// the other waiting ones (t.Parallel), its HOME named to its programs
// alone (testenv.HomeDir).
func TestKeepStartsTheModelAgain(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 4, "landlock ABI 4 (the model's TCP port)")
	t.Parallel()
	home := testenv.HomeDir(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, "Link", "Agents", "ada", "Home", "memory", "fruit.md")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte("A kumquat tree grows by the door.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ada, _ := caps.LoadAgent(home, "ada")
	sock := filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "run", service.SocketName)
	t.Cleanup(func() { service.Stop(context.Background(), sock) })
	cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "connect", "--agent", "ada")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	search := func(words string) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"words": words}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	byMeaning := func(tries int) bool {
		for i := 0; i < tries; i++ {
			if strings.Contains(search("kumquats"), "memory/fruit.md") {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	if !byMeaning(300) {
		t.Fatal("never found by meaning")
	}
	logPath := filepath.Join(home, "Link", "Agents", ".memory", ada.Owner, "memory.log")
	log, _ := os.ReadFile(logPath)
	m := regexp.MustCompile(`the model at 127\.0\.0\.1:(\d+) answers`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("memory.log names no model:\n%s", log)
	}
	pid := modelPID(t, string(m[1]))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		// Gone (reaped by keep), its copy of the socket closed.
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Nothing else can take the port while no model serves it.
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		if err := bindReusing(host, string(m[1])); !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("binding %s:%s with the model down: %v, want EADDRINUSE", host, m[1], err)
		}
	}
	// Words alone while it is away.
	if got := search("kumquats"); got != "nothing found" {
		t.Fatalf("found by meaning with the model gone: %q", got)
	}
	if got := search("kumquat"); !strings.Contains(got, "memory/fruit.md") {
		t.Fatalf("by words with the model gone: %q", got)
	}
	// Started again on the same port, and asked again: meaning is back.
	if !byMeaning(900) {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("meaning never came back after the model ended:\n%s", log)
	}
	if again := modelPID(t, string(m[1])); again == pid {
		t.Errorf("the same model process %d answers", pid)
	}
}

// bindReusing binds a TCP socket of its own to host:port with
// SO_REUSEADDR and SO_REUSEPORT set, as a program out to take the port
// would, and listens; nil if it could (the socket then closed).
func bindReusing(host, port string) error {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = errors.Join(syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1),
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1))
		})
		return errors.Join(err, serr)
	}}
	l, err := lc.Listen(context.Background(), "tcp4", net.JoinHostPort(host, port))
	if err == nil {
		l.Close()
	}
	return err
}

// modelPID is the pid of the lnk model builtin serving the socket
// listening on 127.0.0.1:port (keep holds that socket too).
func modelPID(t *testing.T, port string) int {
	t.Helper()
	inode := listeningInode(t, port)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte("\x00model\x00builtin\x00")) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name())); err == nil && l == "socket:["+inode+"]" {
				pid, _ := strconv.Atoi(e.Name())
				return pid
			}
		}
	}
	t.Fatalf("no model server on port %s", port)
	return 0
}

// listeningInode is the inode of the socket listening on
// 127.0.0.1:port, from /proc/net/tcp.
func listeningInode(t *testing.T, port string) string {
	t.Helper()
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	local := fmt.Sprintf("0100007F:%04X", n)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == local && f[3] == "0A" {
			return f[9]
		}
	}
	t.Fatalf("nothing listens on 127.0.0.1:%s", port)
	return ""
}
