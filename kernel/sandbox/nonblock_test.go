package sandbox_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// setNonblock sets O_NONBLOCK on the stdio it was given (a file
// description shared with whoever else holds it, as node leaves its
// pipes), then execs the rest of its arguments.
const setNonblock = `import fcntl, os, sys
for fd in (0, 1, 2):
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
os.execv(sys.argv[1], sys.argv[1:])`

// TestRelayWithNonBlockingStdio: lnk-init and its relay start with a
// non-blocking stdio, so Go's runtime opens its poller's fds first thing;
// the relay still serves (it once closed those fds as leaks and failed,
// "relay: listener: invalid argument"), and the command still gets no fd
// beyond 0–2.
func TestRelayWithNonBlockingStdio(t *testing.T) {
	py, err := exec.LookPath("python3")
	testenv.Require(t, err == nil, "python3")
	w := newWorld(t)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:} || exit 9
printf 'GET /_link/none HTTP/1.0\r\n\r\n' >&3
head -n 1 <&3
exec 3<&-
ls /proc/self/fd | tr '\n' ' '`
	for i := range 3 {
		cmd := exec.Command(py, "-c", setNonblock, testenv.Bin(t, "lnk"), "sandbox", "run",
			"--internet-host", "example.com", "--command", "bash", "--command", "head", "--command", "ls", "--command", "tr",
			"--", "bash", "-c", script)
		cmd.Env = append(cmd.Environ(), "HOME="+w.home)
		cmd.WaitDelay = 20 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "HTTP/1.1 404") {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		if strings.Contains(string(out), "relay:") {
			t.Fatalf("run %d: the relay failed: %s", i, out)
		}
		fds := strings.Fields(string(out)[strings.LastIndex(string(out), "\n")+1:])
		if len(fds) != 4 { // 0, 1, 2 and ls's own handle on /proc/self/fd
			t.Fatalf("run %d: the command holds fds %v", i, fds)
		}
	}
}
