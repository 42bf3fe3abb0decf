package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// Through a real sandbox (lnk sandbox run: bubblewrap, landlock,
// seccomp, the relay): curl reaches a granted loopback server only
// through the proxy, is refused an ungranted port with the command that
// would allow it, and cannot connect directly; the log shows each.
func TestSandboxedCurlOnlyThroughProxy(t *testing.T) {
	curl, home, port := sandboxedCurl(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "granted-server") })
	lnk := testenv.Bin(t, "lnk")
	n := 0
	run := func(curlArgs ...string) (string, string) {
		args := append([]string{"sandbox", "run", "--port", fmt.Sprint(port), "--command", curl, "--", curl, "-s", "-m", "20"}, curlArgs...)
		cmd := exec.Command(lnk, args...)
		cmd.Env = append(cmd.Environ(), "HOME="+home)
		// Files, not pipes: a proxy that outlived its sandbox and still
		// holds them can't keep Wait from returning.
		n++
		out, errf := tempFile(t, fmt.Sprintf("out%d", n)), tempFile(t, fmt.Sprintf("err%d", n))
		cmd.Stdout, cmd.Stderr = out, errf
		cmd.WaitDelay = 30 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait() // curl's own status is checked by what it printed
		o, _ := os.ReadFile(out.Name())
		e, _ := os.ReadFile(errf.Name())
		if strings.Contains(string(e), `"decision"`) {
			t.Errorf("the proxy's log reached the sandbox's stderr: %s", e)
		}
		// The proxy's lines are in the wire's log, never the command's stderr.
		l, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
		return string(o), string(l)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	out, log := run(url)
	if out != "granted-server" || !strings.Contains(log, `"kind":"use","request":"net http","route":"127.0.0.1:`) {
		t.Fatalf("through the proxy: %q\nlog: %s", out, log)
	}
	out, log = run(fmt.Sprintf("http://127.0.0.1:%d/", port+1))
	if !strings.Contains(out, fmt.Sprintf("lnk agent allow <agent> --port %d", port+1)) || !strings.Contains(log, `"kind":"refuse","request":"net http"`) {
		t.Fatalf("an ungranted port: %q\nlog: %s", out, log)
	}
	out, _ = run("--noproxy", "*", url)
	if strings.Contains(out, "granted-server") {
		t.Fatalf("a direct connection from the sandbox reached the server: %q", out)
	}
}

// sandboxedCurl is what a test of curl in a real sandbox needs: bwrap and
// curl (the test needs both), a HOME, Link's binaries, a loopback server
// answering with serve on the returned port, and any proxy a sandbox
// left behind ended when the test ends.
func sandboxedCurl(t *testing.T, serve http.HandlerFunc) (curl, home string, port int) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	curl, err = exec.LookPath("curl")
	testenv.Require(t, err == nil, "curl")
	home = testenv.Home(t)
	srv := httptest.NewServer(serve)
	t.Cleanup(srv.Close)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	t.Cleanup(func() { killStrayProxies(t, home) })
	return curl, home, srv.Listener.Addr().(*net.TCPAddr).Port
}

func tempFile(t *testing.T, name string) *os.File {
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// killStrayProxies ends any lnk-netbroker this test's sandboxes started
// (its command line names this test's own HOME) that outlived them: the
// sandbox ends its proxy with SIGTERM when it ends, and a stray one is
// logged, for the sandbox's owner to see, and ended here by its pid.
func killStrayProxies(t *testing.T, home string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
		if len(args) == 3 && filepath.Base(string(args[0])) == "lnk-netbroker" && string(args[1]) == "--home" && string(args[2]) == home {
			t.Logf("a proxy (pid %d) outlived its sandbox; ending it", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
