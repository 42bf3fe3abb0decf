package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/testenv"
)

// With this variable set the test binary is a child that prints the fds
// it inherited (those without close-on-exec) and exits.
const listFDsMarker = "LNK_FS_TEST_LISTFDS"

func TestMain(m *testing.M) {
	if path := os.Getenv(pongMarker); path != "" {
		os.Exit(pong(path))
	}
	if os.Getenv(listFDsMarker) == "1" {
		fmt.Println(strings.Join(inheritedFDs("self"), " "))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// inheritedFDs lists pid's fds that lack close-on-exec, as "n→target".
func inheritedFDs(pid string) []string {
	dir := "/proc/" + pid + "/fd"
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		fd, _ := strconv.Atoi(e.Name())
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || strings.HasSuffix(target, "/fd") && strings.HasPrefix(target, "/proc/") {
			continue // gone, or the listing's own fd
		}
		if cloexec(pid, fd) {
			continue
		}
		out = append(out, fmt.Sprintf("%d→%s", fd, target))
	}
	return out
}

func cloexec(pid string, fd int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%s/fdinfo/%d", pid, fd))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			var flags uint64
			fmt.Sscanf(strings.TrimSpace(v), "%o", &flags)
			return flags&unix.O_CLOEXEC != 0
		}
	}
	return false
}

// tree is a temporary HOME with two folders to hand over: home (read and
// write) and conf (read only), and a file outside both.
type tree struct {
	home, conf, outside string
}

func newTree(t testing.TB) tree {
	t.Helper()
	// The binary first: testenv.Bin builds with the real HOME's caches.
	testenv.Bin(t, "lnk-fsbroker")
	h := testenv.Home(t)
	tr := tree{
		home:    filepath.Join(h, "Link", "Agents", "a", "Home"),
		conf:    filepath.Join(h, "Link", "Agents", "a", "Config"),
		outside: filepath.Join(h, "outside"),
	}
	for _, d := range []string{tr.home, tr.conf, tr.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(tr.conf, "sandbox.toml"), []byte("[files]\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(tr.outside, "sentinel"), []byte("secret"), 0o600))
	must(t, os.Symlink(filepath.Join(tr.outside, "sentinel"), filepath.Join(tr.home, "ln")))
	return tr
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// startBroker starts the real lnk-fsbroker on tr's folders.
func startBroker(t testing.TB, tr tree) (*Client, *brokerproc.Proc) {
	t.Helper()
	home, err := OpenDir(tr.home)
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	conf, err := OpenDir(tr.conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	c, p, err := Start(context.Background(), testenv.Bin(t, "lnk-fsbroker"),
		[]Root{{Name: "home", Dir: home, Write: true}, {Name: "conf", Dir: conf}}, os.Stderr)
	testenv.Require(t, err == nil || !strings.Contains(fmt.Sprint(err), "cannot confine"), "landlock and seccomp for lnk-fsbroker")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		p.Kill()
	})
	return c, p
}

var resolveWalkAll = resolve.WalkOptions{}

// fdsOf lists /proc/pid/fd as number → link target.
func fdsOf(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while listed
		}
		m[n] = target
	}
	return m
}

// sendRaw writes one datagram with n copies of fd beside it.
func sendRaw(t *testing.T, sock int, b []byte, n int, fd ...int) {
	t.Helper()
	var fds []int
	for i := 0; i < n; i++ {
		fds = append(fds, fd[0])
	}
	var oob []byte
	if n > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(sock, b, oob, nil, 0); err != nil {
		t.Fatal(err)
	}
}
