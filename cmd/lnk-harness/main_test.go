package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/config"
)

// goodConfig writes a config.json for an Agent/ folder of its own in a
// fresh folder and returns its path.
func goodConfig(t *testing.T, port int) string {
	t.Helper()
	dir := t.TempDir()
	agent := filepath.Join(dir, "Agent")
	os.Mkdir(agent, 0o700)
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o700)
	c := &config.Config{AgentID: strings.Repeat("ab", 16), Owner: "ana", Name: "helper", Key: config.NewKey(), Port: port, AgentDir: agent,
		Model: config.Model{Format: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m", Key: "placeholder"}}
	fd, err := unix.Open(home, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := config.Write(fd, c); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(home, config.File)
}

// A config.json that is a link, or names a port other than $LNK_PORT, is
// refused with one line saying why; a relative path too.
func TestRefusesConfig(t *testing.T) {
	good := goodConfig(t, 20000)
	link := filepath.Join(t.TempDir(), config.File)
	os.Symlink(good, link)
	if err := run([]string{link}); err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "link") {
		t.Fatalf("a link: %v", err)
	}
	if err := run([]string{"config.json"}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Fatalf("a relative path: %v", err)
	}
	t.Setenv("LNK_PORT", "20001")
	if err := run([]string{good}); err == nil || !strings.Contains(err.Error(), "is not $LNK_PORT") {
		t.Fatalf("another port: %v", err)
	}
}

// The program serves its endpoint on 127.0.0.1 and ends cleanly (exit 0,
// its last line said) at SIGTERM.
func TestSIGTERMEndsCleanly(t *testing.T) {
	bin := testenv.Bin(t, "lnk-harness")
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := goodConfig(t, port)
	var errb bytes.Buffer
	cmd := exec.Command(bin, cfg)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LNK_PORT=" + strconv.Itoa(port)}
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatalf("never listened: %s", errb.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "agent helper stopped") {
		t.Fatalf("stderr: %s", errb.String())
	}
}
