package sandbox_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
)

// lnk makes the proxy's socket itself and starts the sandbox without
// waiting for lnk-netbroker: a command in the sandbox reaches a server
// on the host's loopback through that socket, the real proxy serving it
// once it has started; the run leaves no socket or folder behind.
func TestSandboxReachesAServerThroughTheSocketLnkMade(t *testing.T) {
	requireSandbox(t)
	home := testenv.Home(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFirstLines(t, l, sawLine)
	port := l.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}
printf 'GET http://127.0.0.1:%d/x HTTP/1.0\r\n\r\n' >&3
cat <&3`, port)
	code, out, errs := lnk(t, "sandbox", "run", "--port", fmt.Sprint(port), "--command", "bash", "--", "bash", "-c", script)
	if code != 0 || !strings.Contains(out, "X-Server-Saw: GET /x HTTP/1.") {
		t.Fatalf("exit %d: the request did not reach the server through the proxy\n%s%s", code, out, errs)
	}
	ents, err := os.ReadDir(filepath.Join(home, ".lnk", "agents", ".net"))
	if err != nil || len(ents) != 0 {
		t.Fatalf("the run left %v in ~/.lnk/agents/.net (%v)", ents, err)
	}
}

// A proxy that fails after lnk started it (here: sealed secrets for a
// run with no agent, which lnk-netbroker refuses) is said: its own
// message on its stderr, and Stop's ErrProxyFailed. Its socket, which
// lnk made and keeps no copy of, then refuses connections: what the
// sandbox sent could never reach anything but the proxy.
func TestProxyThatFailsIsReported(t *testing.T) {
	requireSandbox(t)
	home := testenv.Home(t)
	c, err := caps.CompileFlags(home, home, caps.Grants{Ports: []string{"9"}})
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer ours.Close()
	defer theirs.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer errR.Close()
	p, err := sandbox.StartProxy(c, testenv.Bin(t, "lnk-netbroker"), false, errW,
		nil, &sandbox.SealedKeys{Names: []string{"SOME_TOKEN"}, Channel: theirs})
	errW.Close()
	if err != nil {
		t.Fatalf("lnk could not start the proxy: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			p.Stop()
		}
	})
	if p.Socket == "" || len(p.Secret) != 64 || !strings.HasPrefix(p.Placeholders["SOME_TOKEN"], "lnk-sealed-some_token-") {
		t.Fatalf("what lnk chose for the sandbox: %+v", p)
	}
	// The proxy's own message comes, then its stderr closes: it ended.
	said := make(chan string, 1)
	go func() {
		b, _ := bufio.NewReader(errR).ReadString(0)
		said <- b
	}()
	var msg string
	select {
	case msg = <-said:
	case <-time.After(30 * time.Second):
		t.Fatal("lnk-netbroker did not end within 30 s")
	}
	if !strings.Contains(msg, "lnk-netbroker: ") || !strings.Contains(msg, "this run has none") {
		t.Fatalf("the proxy's message: %q", msg)
	}
	// Its stderr closes as it exits; the socket refuses once it is gone.
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.Dial("unix", p.Socket)
		if err == nil {
			conn.Close()
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed proxy's socket still takes connections (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped = true
	if err := p.Stop(); !errors.Is(err, sandbox.ErrProxyFailed) {
		t.Fatalf("Stop of a proxy that failed: %v, want ErrProxyFailed", err)
	}
	if _, err := os.Lstat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket outlived Stop: %v", err)
	}
}

// The sandbox never waits for the proxy: with lnk-netbroker stopped
// (SIGSTOP) from the moment it was started, the sandbox still starts,
// and its command connects through the relay and sends its request,
// which waits in the socket's backlog; once the proxy runs again it
// accepts and serves it. A real ordering, not a timing.
func TestSandboxStartsWhileTheProxyCannotRun(t *testing.T) {
	w := newWorld(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFirstLines(t, l, sawLine)
	port := l.Addr().(*net.TCPAddr).Port
	c := compile(t, w, caps.Grants{Commands: []string{"bash"}, Ports: []string{fmt.Sprint(port)}})
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0) // the proxy's log lines
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	p, err := sandbox.StartProxy(c, testenv.Bin(t, "lnk-netbroker"), false, devNull, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Stopped as soon as it was started: it has not served yet.
	pid := sandbox.ProxyPid(p)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGCONT)
		if err := p.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	// Build takes the proxy as lnk sandbox run hands it, and must not
	// wait for it.
	type built struct {
		s   *sandbox.Sandbox
		err error
	}
	b := make(chan built, 1)
	go func() {
		s, err := sandbox.Build(c, sandbox.Options{InitPath: testenv.Bin(t, "lnk-init"), RelayChannel: p.Relay, Proxy: p,
			Argv: []string{"bash", "-c", fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}
printf 'GET http://127.0.0.1:%d/x HTTP/1.0\r\n\r\n' >&3
echo sent
cat <&3`, port)}})
		b <- built{s, err}
	}()
	var s *sandbox.Sandbox
	select {
	case r := <-b:
		if r.err != nil {
			t.Fatalf("build: %v", r.err)
		}
		s = r.s
	case <-time.After(30 * time.Second):
		syscall.Kill(pid, syscall.SIGCONT) // let the waiting Build end
		t.Fatal("Build waited for a proxy that could not run")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	var errb strings.Builder
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := s.Start(nil, outW, &errb, nil)
		outW.Close()
		done <- result{code, err}
	}()
	out := bufio.NewReader(outR)
	first := make(chan string, 1)
	go func() { line, _ := out.ReadString('\n'); first <- line }()
	select {
	case line := <-first:
		if line != "sent\n" {
			r := <-done
			t.Fatalf("the command did not send through the relay while the proxy was stopped: %q (exit %d, %v) %s", line, r.code, r.err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sandbox's command did not run within 30 s while the proxy was stopped")
	}
	// The proxy was stopped all along: the request is in the backlog.
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	out.WriteTo(&rest)
	r := <-done
	if r.err != nil || r.code != 0 || !strings.Contains(rest.String(), "X-Server-Saw: GET /x HTTP/1.") {
		t.Fatalf("after the proxy ran: exit %d, %v\n%s%s", r.code, r.err, rest.String(), errb.String())
	}
}

// The proxy starts beside the sandbox's own setup (Sandbox.Started, as
// lnk sandbox run does): readied first, the sandbox built and started,
// then launched. A proxy that cannot start stops the sandbox at once,
// its command never left running, and Start says why.
func TestProxyThatCannotStartStopsTheSandbox(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Commands: []string{"sleep"}, Ports: []string{"1"}})
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sandbox.NewProxy(c, filepath.Join(t.TempDir(), "no-lnk-netbroker"), false, devNull, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mark := "3600.4242"
	s, err := sandbox.Build(c, sandbox.Options{InitPath: testenv.Bin(t, "lnk-init"), RelayChannel: p.Relay, Proxy: p,
		Argv: []string{"sleep", mark}})
	if err != nil {
		t.Fatal(err)
	}
	s.Started = p.Launch
	start := time.Now()
	_, err = s.Start(nil, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "start the proxy") {
		t.Fatalf("Start: %v, want the proxy's failure to start", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Start returned after %s: the command ran on", d)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop of a proxy that never ran: %v", err)
	}
	if _, err := os.Lstat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket outlived Stop: %v", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := false
		for _, pr := range procs() {
			if strings.Contains(cmdline(pr), mark) {
				left = true
			}
		}
		if !left {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the sandbox's command still runs after Start failed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
