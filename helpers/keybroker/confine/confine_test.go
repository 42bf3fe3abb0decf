package confine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

const childEnv = "LNK_KEYBROKER_CONFINE_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		confinedChild(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// confinedChild confines itself as lnk-keybroker does, then tries what the
// broker must and must not be able to do, one line each.
func confinedChild(dir string) {
	keys, err := unix.Open(filepath.Join(dir, "keys"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		fmt.Println("setup:", err)
		return
	}
	if _, err := Landlock(keys, false); err != nil {
		fmt.Println("landlock:", err)
		return
	}
	if _, err := Seccomp(false); err != nil {
		fmt.Println("seccomp:", err)
		return
	}
	try := func(what string, err error) {
		if err == nil {
			fmt.Printf("%s=allowed\n", what)
		} else {
			fmt.Printf("%s=refused\n", what)
		}
	}
	fd, err := unix.Openat(keys, "k.json", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	try("write-in-keys", err)
	if err == nil {
		unix.Close(fd)
	}
	_, err = unix.Open(filepath.Join(dir, "outside.toml"), unix.O_RDONLY, 0)
	try("read-outside", err)
	_, err = unix.Open("/etc/passwd", unix.O_RDONLY, 0)
	try("read-etc", err)
	_, err = unix.Open(filepath.Join(dir, "new"), unix.O_WRONLY|unix.O_CREAT, 0o600)
	try("create-outside", err)
	err = unix.Exec("/bin/true", []string{"true"}, nil)
	try("exec", err)
	for _, fam := range []struct {
		name string
		n    int
	}{{"unix", unix.AF_UNIX}, {"inet", unix.AF_INET}, {"inet6", unix.AF_INET6}, {"netlink", unix.AF_NETLINK}} {
		s, err := unix.Socket(fam.n, unix.SOCK_STREAM, 0)
		if fam.n == unix.AF_NETLINK {
			s, err = unix.Socket(fam.n, unix.SOCK_RAW, 0)
		}
		try("socket-"+fam.name, err)
		if err == nil {
			unix.Close(s)
		}
	}
	_, _, err = socketpair()
	try("socketpair", err)
	m, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC)
	try("memfd", err)
	if err == nil {
		unix.Close(m)
	}
}

func socketpair() (int, int, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		return -1, -1, err
	}
	unix.Close(fds[1])
	unix.Close(fds[0])
	return fds[0], fds[1], nil
}

// TestConfinement runs a process confined as lnk-keybroker confines
// itself, and checks it may write its keys folder and make memfds, and
// nothing else it tries: no other file, no exec, no socket.
func TestConfinement(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "keys"), 0o700)
	os.WriteFile(filepath.Join(dir, "outside.toml"), []byte("x"), 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := map[string]string{
		"write-in-keys": "allowed", "memfd": "allowed",
		"read-outside": "refused", "read-etc": "refused", "create-outside": "refused", "exec": "refused",
		"socket-unix": "refused", "socket-inet": "refused", "socket-inet6": "refused", "socket-netlink": "refused",
		"socketpair": "refused",
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if t.Failed() {
		t.Logf("child said:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("the confined child made a file outside its keys folder")
	}
}
