package service_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/service"
)

// The first session starts the service (start is called once, and not
// again while it listens); the session is served.
func TestDialStartsTheService(t *testing.T) {
	root := t.TempDir()
	dirPath := filepath.Join(root, ".memory", "owner")
	os.MkdirAll(dirPath, 0o700)
	sock := filepath.Join(dirPath, "run", service.SocketName)
	s := &service.Service{Agents: map[string]*memory.Agent{"ada": agent(t, root, "ada", "aardvark")}, Idle: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	starts := 0
	start := func() error {
		starts++
		dir, err := os.Open(dirPath)
		if err != nil {
			return err
		}
		defer dir.Close()
		l, err := service.Listen(dir)
		if err != nil {
			return err
		}
		go func() { done <- s.Serve(ctx, l) }()
		return nil
	}
	t.Cleanup(func() {
		cancel()
		if starts > 0 {
			<-done
		}
	})
	for i := 0; i < 2; i++ {
		c, err := service.Dial(context.Background(), sock, "ada", start)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: c, Writer: c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := call(t, cs, "search", "", map[string]any{"words": "aardvark"}); !strings.Contains(out, "memory/doc.md") {
			t.Errorf("search: %q", out)
		}
		cs.Close()
	}
	if starts != 1 {
		t.Errorf("start called %d times, want once", starts)
	}
	if _, err := service.Dial(context.Background(), sock, "../ada", start); err == nil {
		t.Error("dialled for a name that is no agent ID")
	}
}

// A socket served by another uid is refused before a byte is sent.
func TestDialRefusesAnotherUIDsService(t *testing.T) {
	testenv.RequireRoot(t, "listening as another uid")
	other, err := user.Lookup("lnktest")
	testenv.Require(t, err == nil, "the user lnktest")
	uid, _ := strconv.Atoi(other.Uid)
	gid, _ := strconv.Atoi(other.Gid)
	dir, err := os.MkdirTemp("", "lnk-memory-dial-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	self, _ := os.Executable()
	data, _ := os.ReadFile(self)
	bin := filepath.Join(dir, "peer.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "memory.sock")
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{"LNK_MEMORY_TEST_LISTEN=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "listening" {
		t.Fatalf("the other uid's listener: %q", line)
	}
	_, err = service.Dial(context.Background(), sock, "ada", func() error { return nil })
	if err == nil || !strings.Contains(err.Error(), "served by uid "+other.Uid) {
		t.Errorf("dial to another uid's socket: %v", err)
	}
}
