package seccomp_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
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
	if which == "none" {
		tryRefusedCalls() // unfiltered: what the kernel itself answers
		return
	}
	p := seccomp.Policy{Sockets: seccomp.SocketsUnix}
	switch which {
	case "sandbox":
		p = seccomp.SandboxPolicy
	case "inet-only":
		p = seccomp.Policy{Sockets: seccomp.SocketsInetOnly}
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
	report("unspec", sock(unix.AF_UNSPEC))
	report("family-high-bits", errnoErr2(unix.Syscall(unix.SYS_SOCKET, 1<<32|unix.AF_UNIX, unix.SOCK_STREAM, 0)))
	_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
	report("io_uring", errnoErr(e))
	_, _, e = unix.Syscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0) // ADDR_NO_RANDOMIZE
	report("personality", errnoErr(e))
	report("exec", exec.Command("/bin/true").Run())
	memfd := func(flags int) error {
		fd, err := unix.MemfdCreate("lnk-test", flags)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	report("memfd-plain", memfd(unix.MFD_CLOEXEC))
	report("memfd-exec", memfd(unix.MFD_CLOEXEC|unix.MFD_EXEC))
	report("memfd-noexec-seal", memfd(unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL))
	tryRefusedCalls()
	socketpair := func(fam, typ int) error {
		fds, err := unix.Socketpair(fam, typ, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	}
	report("socketpair-unix", socketpair(unix.AF_UNIX, unix.SOCK_STREAM))
	report("socketpair-netlink", socketpair(unix.AF_NETLINK, unix.SOCK_DGRAM))
	report("socketpair-unix-raw", socketpair(unix.AF_UNIX, unix.SOCK_RAW))
}

// tryRefusedCalls makes each of refusedCalls' and namespaceFlags' calls
// and reports what it answered.
func tryRefusedCalls() {
	for _, c := range refusedCalls {
		_, _, e := unix.Syscall6(c.nr, c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5])
		report(c.name, errnoErr(e))
	}
	for _, f := range namespaceFlags {
		// CLONE_SIGHAND without CLONE_VM is invalid, so an unfiltered
		// clone fails (EINVAL) rather than forking.
		_, _, e := unix.Syscall6(unix.SYS_CLONE, f.flag|unix.CLONE_SIGHAND, 0, 0, 0, 0, 0)
		report("clone-"+f.name, errnoErr(e))
		_, _, e = unix.Syscall(unix.SYS_UNSHARE, f.flag, 0, 0)
		report("unshare-"+f.name, errnoErr(e))
	}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, ^uintptr(0), unix.TIOCLINUX, 0) // no fd: EBADF unfiltered
	report("tioclinux", errnoErr(e))
}

// refusedCalls are the calls every sandbox and broker refuses (EPERM;
// clone3 ENOSYS), each with arguments the kernel itself would refuse
// (a bad pointer, fd, flag or magic number), so that a filter missing one
// of them shows as another errno, never as a call that did something
// (but unshare, which unfiltered may make the child namespaces of its
// own, and nothing else). TestRefusalsAreTheFiltersNotTheKernels checks
// the kernel's own answers differ.
var refusedCalls = []struct {
	name string
	nr   uintptr
	args [6]uintptr
}{
	{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uintptr{0, 0, 0, 0, 0, 1}},
	{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, [6]uintptr{0, 0, 0, 0, 0, 1}},
	{"mount", unix.SYS_MOUNT, [6]uintptr{1, 1, 1, 0, 1}},
	{"umount2", unix.SYS_UMOUNT2, [6]uintptr{1, ^uintptr(0)}},
	{"pivot_root", unix.SYS_PIVOT_ROOT, [6]uintptr{1, 1}},
	{"move_mount", unix.SYS_MOVE_MOUNT, [6]uintptr{^uintptr(0), 1, ^uintptr(0), 1, ^uintptr(0)}},
	{"open_tree", unix.SYS_OPEN_TREE, [6]uintptr{^uintptr(0), 1, ^uintptr(0)}},
	{"fsopen", unix.SYS_FSOPEN, [6]uintptr{1, ^uintptr(0)}},
	{"fsmount", unix.SYS_FSMOUNT, [6]uintptr{^uintptr(0), ^uintptr(0), ^uintptr(0)}},
	{"fsconfig", unix.SYS_FSCONFIG, [6]uintptr{^uintptr(0), ^uintptr(0)}},
	{"fspick", unix.SYS_FSPICK, [6]uintptr{^uintptr(0), 1, ^uintptr(0)}},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR, [6]uintptr{^uintptr(0), 1, ^uintptr(0), 1, 1}},
	{"chroot", unix.SYS_CHROOT, [6]uintptr{1}},
	{"setns", unix.SYS_SETNS, [6]uintptr{^uintptr(0)}},
	{"keyctl", unix.SYS_KEYCTL, [6]uintptr{^uintptr(0)}},
	{"add_key", unix.SYS_ADD_KEY, [6]uintptr{1, 1, 1, 1, 1}},
	{"request_key", unix.SYS_REQUEST_KEY, [6]uintptr{1, 1, 1, 1}},
	{"bpf", unix.SYS_BPF, [6]uintptr{^uintptr(0), 1, 1}},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, [6]uintptr{1, 0, ^uintptr(0), ^uintptr(0), ^uintptr(0)}},
	{"userfaultfd", unix.SYS_USERFAULTFD, [6]uintptr{^uintptr(0)}},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER, [6]uintptr{^uintptr(0)}},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER, [6]uintptr{^uintptr(0)}},
	{"kexec_load", unix.SYS_KEXEC_LOAD, [6]uintptr{0, 0, 1, ^uintptr(0)}},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD, [6]uintptr{^uintptr(0), ^uintptr(0), 0, 1, ^uintptr(0)}},
	{"init_module", unix.SYS_INIT_MODULE, [6]uintptr{1, 1, 1}},
	{"finit_module", unix.SYS_FINIT_MODULE, [6]uintptr{^uintptr(0), 1, ^uintptr(0)}},
	{"delete_module", unix.SYS_DELETE_MODULE, [6]uintptr{1, ^uintptr(0)}},
	{"acct", unix.SYS_ACCT, [6]uintptr{1}},
	{"swapon", unix.SYS_SWAPON, [6]uintptr{1}},
	{"swapoff", unix.SYS_SWAPOFF, [6]uintptr{1}},
	{"reboot", unix.SYS_REBOOT, [6]uintptr{1, 1, 1, 1}},
	{"quotactl", unix.SYS_QUOTACTL, [6]uintptr{^uintptr(0), 1, 1, 1}},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, [6]uintptr{^uintptr(0), 1}},
	{"iopl", unix.SYS_IOPL, [6]uintptr{4}},
	{"ioperm", unix.SYS_IOPERM, [6]uintptr{^uintptr(0), 1, 1}},
	{"uselib", unix.SYS_USELIB, [6]uintptr{1}},
	{"syslog", unix.SYS_SYSLOG, [6]uintptr{^uintptr(0)}},
	{"lookup_dcookie", unix.SYS_LOOKUP_DCOOKIE, [6]uintptr{0, 1, 1}},
	{"clone3", unix.SYS_CLONE3, [6]uintptr{1, 1}},
}

// namespaceFlags are what clone and unshare may not make.
var namespaceFlags = []struct {
	name string
	flag uintptr
}{
	{"newns", unix.CLONE_NEWNS}, {"newcgroup", unix.CLONE_NEWCGROUP}, {"newuts", unix.CLONE_NEWUTS},
	{"newipc", unix.CLONE_NEWIPC}, {"newuser", unix.CLONE_NEWUSER}, {"newpid", unix.CLONE_NEWPID},
	{"newnet", unix.CLONE_NEWNET}, {"newtime", unix.CLONE_NEWTIME},
}

// refusedLines is what the child must say of refusedCalls and
// namespaceFlags under either policy.
func refusedLines() []string {
	var l []string
	for _, c := range refusedCalls {
		errno := "EPERM"
		if c.name == "clone3" {
			errno = "ENOSYS" // libc and Go then fall back to clone, which the filter can read
		}
		l = append(l, c.name+" "+errno)
	}
	for _, f := range namespaceFlags {
		l = append(l, "clone-"+f.name+" EPERM", "unshare-"+f.name+" EPERM")
	}
	return append(l, "tioclinux EPERM")
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
	// A session of its own: no controlling terminal for a call that
	// slipped through to touch.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
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
		"family-high-bits EAFNOSUPPORT", "io_uring EPERM", "personality EPERM", "exec EPERM",
		"socketpair-unix ok", "socketpair-netlink EAFNOSUPPORT",
		"memfd-plain ok", "memfd-exec ok", "memfd-noexec-seal ok") // a broker execs nothing: its memfds are never run
	want(t, out, refusedLines()...)
}

// TestBrokerPolicyInetOnly: a broker that uses only the unix sockets it
// was handed (lnk-netbroker) makes no AF_UNIX socket, nor a socketpair,
// so it can connect to no named socket; inet and inet6 still work.
func TestBrokerPolicyInetOnly(t *testing.T) {
	out := runChild(t, "inet-only")
	want(t, out, "unix EAFNOSUPPORT", "socketpair-unix EAFNOSUPPORT", "unspec EAFNOSUPPORT",
		"inet ok", "inet6 ok", "netlink EAFNOSUPPORT", "packet EAFNOSUPPORT", "vsock EAFNOSUPPORT",
		"raw-inet EPERM", "family-high-bits EAFNOSUPPORT", "exec EPERM", "ptrace EPERM")
	want(t, out, refusedLines()...)
}

// TestSandboxMemfdOnlyNoexecSealed: in the sandbox's filter a memfd is
// made only sealed noexec (the control); one that could be made
// executable, with MFD_EXEC or no flag, is ENOSYS.
func TestSandboxMemfdOnlyNoexecSealed(t *testing.T) {
	want(t, runChild(t, "sandbox"), "memfd-plain ENOSYS", "memfd-exec ENOSYS", "memfd-noexec-seal ok")
}

func TestSandboxPolicy(t *testing.T) {
	out := runChild(t, "sandbox")
	want(t, out, "ptrace EPERM", "unshare-user EPERM", "tiocsti EPERM", "tiocsti-high-bits EPERM",
		"unix ok", "inet ok", "netlink EAFNOSUPPORT", "packet EAFNOSUPPORT",
		"vsock EAFNOSUPPORT", "raw-inet EPERM", "io_uring EPERM", "personality EPERM", "exec ok",
		"socketpair-unix ok", "socketpair-netlink EAFNOSUPPORT", "socketpair-unix-raw EPERM")
	want(t, out, refusedLines()...)
}

func TestBPFIsWholeInstructions(t *testing.T) {
	b, err := seccomp.SandboxBPF()
	testenv.Require(t, err == nil, "libseccomp")
	if len(b) == 0 || len(b)%8 != 0 {
		t.Fatalf("BPF of %d bytes is not whole sock_filter instructions", len(b))
	}
}

// TestRefusalsAreTheFiltersNotTheKernels: each refused call, made with no
// filter, is answered otherwise than the filter answers it, so the
// policy tests above would see a rule gone. Unprivileged, the kernel
// refuses some (pivot_root, acct, reboot, unshare of a mount namespace…)
// with EPERM itself: those prove nothing in that run, and are named; as
// root (as CI runs it) every one must differ.
func TestRefusalsAreTheFiltersNotTheKernels(t *testing.T) {
	out := runChild(t, "none")
	var same []string
	for _, l := range refusedLines() {
		name, _, _ := strings.Cut(l, " ")
		if !strings.Contains("\n"+out, "\n"+name+" ") {
			t.Fatalf("the unfiltered child said nothing of %s:\n%s", name, out)
		}
		if strings.Contains(out, l+"\n") {
			same = append(same, l)
		}
	}
	switch {
	case len(same) > 0 && os.Getuid() == 0:
		t.Errorf("unfiltered, the kernel answers these as the filter does, so a rule gone would pass unseen: %v\n%s", same, out)
	case len(same) > 0:
		t.Logf("unprivileged, the kernel itself refuses %v: the policy tests prove those rules only as root", same)
	}
}
