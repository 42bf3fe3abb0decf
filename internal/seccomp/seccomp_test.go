package seccomp_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
)

// TestMain runs a confined child's part when LNK_SC_CHILD names a policy.
func TestMain(m *testing.M) {
	if c := os.Getenv("LNK_SC_CHILD"); c != "" {
		child(c)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(which string) {
	p := seccomp.Policy{Sockets: seccomp.SocketsUnix}
	if which == "sandbox" {
		p = seccomp.SandboxPolicy
	}
	if err := seccomp.ConfineBroker(p); err != nil {
		fmt.Println("confine:", err)
		return
	}
	sock := func(fam int) error {
		fd, err := unix.Socket(fam, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	raw := func(fam, typ int) error {
		fd, err := unix.Socket(fam, typ, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	ioctl := func(req uintptr) error {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, ^uintptr(0), req, 0)
		return errnoErr(e)
	}
	report("ptrace", unix.PtraceAttach(1))
	report("unshare-user", unix.Unshare(unix.CLONE_NEWUSER))
	report("unshare-none", unix.Unshare(0))
	report("tiocsti", ioctl(unix.TIOCSTI))
	report("tiocsti-high-bits", ioctl(1<<32|unix.TIOCSTI))
	report("tiocgwinsz", ioctl(unix.TIOCGWINSZ))
	report("unix", sock(unix.AF_UNIX))
	report("inet", sock(unix.AF_INET))
	report("inet6", sock(unix.AF_INET6))
	report("netlink", raw(unix.AF_NETLINK, unix.SOCK_DGRAM))
	report("packet", raw(unix.AF_PACKET, unix.SOCK_DGRAM))
	report("raw-inet", raw(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC))
	report("vsock", sock(unix.AF_VSOCK))
	report("family-high-bits", errnoErr2(unix.Syscall(unix.SYS_SOCKET, 1<<32|unix.AF_UNIX, unix.SOCK_STREAM, 0)))
	_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
	report("io_uring", errnoErr(e))
	_, _, e = unix.Syscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0) // ADDR_NO_RANDOMIZE
	report("personality", errnoErr(e))
	report("exec", exec.Command("/bin/true").Run())
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func errnoErr2(r, _ uintptr, e unix.Errno) error {
	if e == 0 {
		unix.Close(int(r))
	}
	return errnoErr(e)
}

func report(what string, err error) {
	var e unix.Errno
	switch {
	case err == nil:
		fmt.Println(what, "ok")
	case errors.As(err, &e):
		fmt.Println(what, unix.ErrnoName(e))
	default:
		fmt.Println(what, "error:", err)
	}
}

func runChild(t *testing.T, which string) string {
	t.Helper()
	_, err := seccomp.SandboxBPF()
	testenv.Require(t, err == nil, "libseccomp ("+fmt.Sprint(err)+")")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "LNK_SC_CHILD="+which)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return string(out)
}

func want(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("child said:\n%s\nwanted the line %q", out, l)
		}
	}
}

func TestBrokerPolicyUnixOnly(t *testing.T) {
	out := runChild(t, "broker")
	want(t, out, "ptrace EPERM", "unshare-user EPERM", "unshare-none ok",
		"tiocsti EPERM", "tiocsti-high-bits EPERM", "tiocgwinsz EBADF",
		"unix ok", "inet EAFNOSUPPORT", "inet6 EAFNOSUPPORT", "netlink EAFNOSUPPORT",
		"family-high-bits EAFNOSUPPORT", "io_uring EPERM", "personality EPERM", "exec EPERM")
}

func TestSandboxPolicy(t *testing.T) {
	out := runChild(t, "sandbox")
	want(t, out, "ptrace EPERM", "unshare-user EPERM", "tiocsti EPERM", "tiocsti-high-bits EPERM",
		"unix ok", "inet ok", "netlink EAFNOSUPPORT", "packet EAFNOSUPPORT",
		"vsock EAFNOSUPPORT", "raw-inet EPERM", "io_uring EPERM", "personality EPERM", "exec ok")
}

func TestBPFIsWholeInstructions(t *testing.T) {
	b, err := seccomp.SandboxBPF()
	testenv.Require(t, err == nil, "libseccomp")
	if len(b) == 0 || len(b)%8 != 0 {
		t.Fatalf("BPF of %d bytes is not whole sock_filter instructions", len(b))
	}
}
