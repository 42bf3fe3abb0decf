package kernel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv("LNK_KERNEL_TEST_CONNECT"); sock != "" {
		if os.Getenv("LNK_KERNEL_TEST_CONFINE") == "1" {
			// As Link confines a broker: a seccomp filter (this one
			// still lets it make a unix socket) and no_new_privs.
			if err := seccomp.ConfineBroker(seccomp.Policy{Sockets: seccomp.SocketsUnix}); err != nil {
				fmt.Println("confine:", err)
				os.Exit(2)
			}
		}
		os.Exit(connectAndPing(sock))
	}
	if filepath.Base(os.Args[0]) == "lnk-toolbridge" {
		os.Exit(fakeBridge()) // start_bridge_test.go
	}
	if os.Getenv("LNK_KERNEL_TEST_BROKER") == "1" {
		os.Exit(testBroker())
	}
	// A kernel `lnk kernel start` leaves behind is reparented to this
	// process, so a test can wait for it to end.
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	os.Exit(m.Run())
}

// kernelProc is a foreground `lnk kernel run` the test started.
type kernelProc struct {
	cmd  *exec.Cmd
	home string
	done chan struct{}
	err  error
}

// startKernel runs `lnk kernel run` under home with LNK_KERNEL_TESTING=1
// and returns once it listens (it says so on stderr). It is killed and
// waited for at cleanup. The file broker is built beside lnk: a start
// with folders is refused without it.
func startKernel(t *testing.T, home string) *kernelProc {
	t.Helper()
	testenv.Bin(t, "lnk-fsbroker")
	testenv.Bin(t, "lnk-keybroker") // a start naming an agent ID needs it
	return startKernelOf(t, home, testenv.Bin(t, "lnk"))
}

// startKernelOf is startKernel with the lnk binary at lnkPath: its
// brokers are the binaries beside it.
func startKernelOf(t *testing.T, home, lnkPath string) *kernelProc {
	t.Helper()
	cmd := exec.Command(lnkPath, "kernel", "run")
	cmd.Env = append(os.Environ(), "HOME="+home, "LNK_KERNEL_TESTING=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kp := &kernelProc{cmd: cmd, home: home, done: make(chan struct{})}
	ready := make(chan string, 1)
	var tail bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			tail.WriteString(line + "\n")
			if strings.Contains(line, "listening") {
				select {
				case ready <- line:
				default:
				}
			}
		}
		kp.err = cmd.Wait()
		close(kp.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-kp.done
	})
	select {
	case <-ready:
	case <-kp.done:
		t.Fatalf("the kernel exited before it listened: %v\n%s", kp.err, tail.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the kernel did not listen within 30 s")
	}
	return kp
}

// wait waits for the kernel to exit, failing the test after 30 s.
func (kp *kernelProc) wait(t *testing.T) {
	t.Helper()
	select {
	case <-kp.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the kernel did not exit within 30 s")
	}
}

// connect connects to the kernel under home.
func connect(t *testing.T, home string) *client.Client {
	t.Helper()
	c, err := client.Connect(home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// auditLines reads the audit log's entries.
func auditLines(t *testing.T, home string) []audit.Entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var es []audit.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		es = append(es, e)
	}
	return es
}

// waitAudit polls the audit log until an entry matches, failing after 30 s.
func waitAudit(t *testing.T, home string, what string, match func(audit.Entry) bool) audit.Entry {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, e := range auditLines(t, home) {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit line %s within 30 s; the log:\n%s", what, dumpAudit(t, home))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func dumpAudit(t *testing.T, home string) string {
	b, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	return string(b)
}

// rawConn dials the kernel's socket as a bare SOCK_SEQPACKET fd, for
// sending records no client would.
func rawConn(t *testing.T, home string) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: filepath.Join(home, ".lnk", "run", "kernel.sock")}); err != nil {
		t.Fatal(err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 30})
	return fd
}

// readEnd reads from fd until the kernel closes it (or 30 s pass) and
// reports whether it closed.
func readEnd(t *testing.T, fd int) bool {
	t.Helper()
	buf := make([]byte, 1<<17)
	for {
		n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return errors.Is(err, unix.ECONNRESET)
		}
		if n == 0 {
			return true
		}
	}
}

// lnk runs the lnk CLI with HOME=home and returns its output and code.
func lnk(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// connectAndPing is the child's side of the other-uid test: connect to
// sock, send a ping, and say what came back.
func connectAndPing(sock string) int {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("socket:", err)
		return 2
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		fmt.Println("connect:", err)
		return 2
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 30})
	rec := pingRecord()
	unix.Sendmsg(fd, rec, nil, nil, unix.MSG_NOSIGNAL)
	buf := make([]byte, 4096)
	n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
	switch {
	case err != nil && !errors.Is(err, unix.ECONNRESET):
		fmt.Println("recv:", err)
		return 2
	case n > 0:
		fmt.Println("answered")
	default:
		fmt.Println("closed")
	}
	return 0
}

var _ = io.EOF
var _ = syscall.SIGTERM
