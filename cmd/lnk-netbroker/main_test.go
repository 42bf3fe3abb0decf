package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// The real binary, confined by landlock and seccomp, serves its socket:
// a granted loopback port passes, an ungranted one and metadata are
// refused and logged, and SIGTERM removes the socket.
func TestBrokerServesConfined(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	home := testenv.Home(t)
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	port := uint16(echo.Addr().(*net.TCPAddr).Port)
	grants, _ := json.Marshal(netbroker.Grants{AgentID: strings.Repeat("ab", 16), AgentName: "main", LocalhostPorts: []uint16{port}})

	cmd := exec.Command(testenv.Bin(t, "lnk-netbroker"), "--home", home)
	cmd.Stdin = bytes.NewReader(grants)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Error("lnk-netbroker did not exit after SIGKILL")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no socket path on stdout: %v; stderr: %s", err, stderr)
	}
	socket := strings.TrimSpace(line)
	if want := filepath.Join(home, ".lnk", "agents", ".net", strings.Repeat("ab", 16)); filepath.Dir(socket) != want || !strings.HasSuffix(socket, ".sock") {
		t.Fatalf("socket %q, want one in %q", socket, want)
	}
	for p, mode := range map[string]os.FileMode{socket: 0o600, filepath.Dir(socket): 0o700} {
		st, err := os.Lstat(p)
		if err != nil || st.Mode().Perm() != mode {
			t.Fatalf("%s: %v, mode %v, want %o", p, err, st.Mode().Perm(), mode)
		}
	}

	// ask returns the response and a reader of what follows it on the
	// connection: the reader that parsed the response may already hold
	// the tunnel's first bytes.
	ask := func(req string) (*http.Response, io.Reader) {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, req)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		return resp, br
	}
	if resp, c := ask(fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\nping", port)); resp.StatusCode != 200 {
		t.Fatalf("granted port: %s", resp.Status)
	} else {
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping" {
			t.Fatalf("echo through the tunnel: %q %v", b, err)
		}
	}
	if resp, _ := ask(fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port+1)); resp.StatusCode != 403 {
		t.Fatalf("ungranted port: %s", resp.Status)
	}
	if resp, _ := ask("GET http://169.254.169.254/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"); resp.StatusCode != 403 {
		t.Fatalf("metadata: %s", resp.Status)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "cloud metadata address") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), `"decision":"refuse"`) || !strings.Contains(stderr.String(), "cloud metadata") {
		t.Fatalf("the refusals are not in the log:\n%s", stderr)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; stderr: %s", err, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30 s of SIGTERM")
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

// A proxy whose starter is gone stops and removes its socket, even
// without a SIGTERM: a shell starts it in the background and exits.
func TestBrokerStopsWhenItsStarterIsGone(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	home := testenv.Home(t)
	dir := t.TempDir()
	grants, _ := json.Marshal(netbroker.Grants{LocalhostPorts: []uint16{1}})
	os.WriteFile(filepath.Join(dir, "grants"), grants, 0o600)
	out := filepath.Join(dir, "out")
	sh := exec.Command("/bin/sh", "-c", `"$0" --home "$1" <"$2" >"$3" 2>/dev/null & echo $!
		while ! grep -q sock "$3"; do sleep 0.05; done`, testenv.Bin(t, "lnk-netbroker"), home, filepath.Join(dir, "grants"), out)
	pidLine, err := sh.Output()
	if err != nil {
		t.Fatalf("the starter: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidLine)))
	t.Cleanup(func() {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	b, _ := os.ReadFile(out)
	socket := strings.TrimSpace(string(b))
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Lstat(socket); os.IsNotExist(err) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the proxy (pid %d) still serves %s 30 s after its starter ended", pid, socket)
}
