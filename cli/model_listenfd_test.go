package cli

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/builtin"
)

// runBuiltinWithFD runs lnk model builtin --listen-fd 3 --no-record (and
// extra) with f as its fd 3, as lnk-memory keep does.
func runBuiltinWithFD(t *testing.T, f *os.File, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), append([]string{"model", "builtin", "--listen-fd", "3", "--no-record"}, extra...)...)
	cmd.Env = []string{"HOME=" + testenv.Home(t), "PATH=" + os.Getenv("PATH")}
	cmd.ExtraFiles = []*os.File{f}
	return cmd
}

// TestModelBuiltinServesAHandedSocket: with --listen-fd the built-in
// model serves on the listening socket its parent made and handed it,
// printing that socket's port, and answers an embedding there; once it
// ends, the port stays held by the parent's copy: another socket cannot
// bind it (EADDRINUSE), and a second model handed the same socket
// answers on it. The refusals are TestModelBuiltinRefusesAHandedFD.
func TestModelBuiltinServesAHandedSocket(t *testing.T) {
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sock, err := l.File()
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for round := 1; round <= 2; round++ {
		cmd := runBuiltinWithFD(t, sock)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != builtin.BaseURL(port) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: printed %q (%v), want the handed socket's %s; stderr %s", round, line, err, builtin.BaseURL(port), stderr.String())
		}
		resp, err := http.Post(builtin.BaseURL(port)+"/embeddings", "application/json", strings.NewReader(`{"model":"default","input":["kumquat"]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"embedding"`) {
			t.Fatalf("round %d: %d %s", round, resp.StatusCode, body)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("round %d: ended with %v; stderr %s", round, err, stderr.String())
		}
		// Its server closed its copy; the parent's holds the port.
		for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
			if other, err := net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(port))); !errors.Is(err, syscall.EADDRINUSE) {
				if err == nil {
					other.Close()
				}
				t.Fatalf("round %d: binding %s:%d after the model ended: %v, want EADDRINUSE", round, host, port, err)
			}
		}
	}
}

// TestModelBuiltinRefusesAHandedFD: --listen-fd refuses, with why and
// a hint, an fd that is not a TCP socket listening on 127.0.0.1 — a
// pipe, a TCP socket bound but not listening, a unix socket listening,
// a listening socket on another loopback address — and --port beside it.
// The positive control is TestModelBuiltinServesAHandedSocket.
func TestModelBuiltinRefusesAHandedFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	bound, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(bound, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	boundF := os.NewFile(uintptr(bound), "bound")
	defer boundF.Close()
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: t.TempDir() + "/s", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	unixF, err := ul.File()
	if err != nil {
		t.Fatal(err)
	}
	defer unixF.Close()
	other, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherF, err := other.File()
	if err != nil {
		t.Fatal(err)
	}
	defer otherF.Close()
	for _, tc := range []struct {
		name  string
		f     *os.File
		extra []string
		code  int
		want  string
	}{
		{"a pipe", r, nil, ExitRefused, "not a socket"},
		{"bound, not listening", boundF, nil, ExitRefused, "does not listen"},
		{"a unix socket", unixF, nil, ExitRefused, "no TCP socket"},
		{"on 127.0.0.2", otherF, nil, ExitRefused, "the built-in model listens on 127.0.0.1 only"},
		{"with --port", otherF, []string{"--port", "11435"}, ExitUsage, "not with --port"},
	} {
		cmd := runBuiltinWithFD(t, tc.f, tc.extra...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.code || !strings.Contains(stderr.String(), tc.want) ||
			!strings.Contains(stderr.String(), "hint: lnk model builtin --port") || stdout.Len() != 0 {
			t.Errorf("%s: %v, stdout %q, stderr %q; want exit %d saying %q and a hint", tc.name, err, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
}
