package sandbox_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"lnk.dev/lnk/internal/testenv"
)

// A kernel without landlock (or seccomp), for real: the test binary,
// started again with withoutEnv set, installs a seccomp filter on itself
// that makes landlock_create_ruleset fail with ENOSYS, as on a kernel
// built without landlock (or seccomp(2) ENOSYS and prctl's PR_GET_SECCOMP
// and PR_SET_SECCOMP EINVAL, as on one built without seccomp), and execs
// lnk. Everything lnk then starts (bubblewrap, lnk-init, the command)
// inherits the filter: for that process tree the kernel lacks the
// feature. Nothing in lnk is told it is a test.

const withoutEnv = "LNK_TEST_EXEC_WITHOUT" // "landlock|seccomp|noexec <argv as JSON>"

// withoutCall is the one call made ENOSYS to take each feature away but
// seccomp: landlock's, and mount_setattr (noexec: a kernel before 5.12).
var withoutCall = map[string]uint32{"landlock": unix.SYS_LANDLOCK_CREATE_RULESET, "noexec": unix.SYS_MOUNT_SETATTR}

func init() {
	v := os.Getenv(withoutEnv)
	if v == "" {
		return
	}
	what, js, _ := strings.Cut(v, " ")
	var argv []string
	if err := json.Unmarshal([]byte(js), &argv); err != nil || len(argv) == 0 || (withoutCall[what] == 0 && what != "seccomp") {
		os.Stderr.WriteString("bad " + withoutEnv + "\n")
		os.Exit(99)
	}
	os.Unsetenv(withoutEnv)
	runtime.LockOSThread() // the filter and NO_NEW_PRIVS are this thread's; it execs
	if err := deny(what); err != nil {
		os.Stderr.WriteString("seccomp: " + err.Error() + "\n")
		os.Exit(99)
	}
	err := unix.Exec(argv[0], argv, os.Environ())
	os.Stderr.WriteString("exec: " + err.Error() + "\n")
	os.Exit(99)
}

// deny installs, on x86-64, a filter taking what away; every other call
// is allowed.
func deny(what string) error {
	const (
		archX8664 = 0xc000003e
		retAllow  = 0x7fff0000
		retErrno  = 0x00050000
	)
	ld := func(k uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: k}
	}
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	var prog []unix.SockFilter
	if nr := withoutCall[what]; nr != 0 {
		prog = []unix.SockFilter{
			ld(4), jeq(archX8664, 0, 3), // another arch: allow
			ld(0), jeq(nr, 0, 1),
			ret(retErrno | uint32(unix.ENOSYS)),
			ret(retAllow),
		}
	} else {
		prog = []unix.SockFilter{
			ld(4), jeq(archX8664, 0, 8), // another arch: allow
			ld(0), jeq(unix.SYS_SECCOMP, 5, 0),
			jeq(unix.SYS_PRCTL, 0, 5),
			ld(16), // prctl's option (args[0], low half)
			jeq(unix.PR_GET_SECCOMP, 1, 0), jeq(unix.PR_SET_SECCOMP, 0, 2),
			ret(retErrno | uint32(unix.EINVAL)),
			ret(retErrno | uint32(unix.ENOSYS)),
			ret(retAllow),
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return e
	}
	return nil
}

// lnkWithout runs lnk args under the filter taking what away. lnk under
// a filter is a confined process, which the kernel refuses as a client:
// a run or check that would be a start of the kernel's (it needs a
// proxy) is refused, so these tests use grants with no proxy
// (--internet=false) and exec bubblewrap from lnk.
func lnkWithout(t *testing.T, what string, args ...string) (int, string, string) {
	t.Helper()
	testenv.Require(t, runtime.GOARCH == "amd64", "x86-64 (the test's seccomp filter is written for it)")
	testenv.Bin(t, "lnk-init")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(append([]string{testenv.Bin(t, "lnk")}, args...))
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), withoutEnv+"="+what+" "+string(argv))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	if cmd.ProcessState.ExitCode() == 99 {
		t.Fatalf("the test's filter did not go on: %s", errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestRefusedWithoutLandlockUnlessDegraded: on a kernel without landlock,
// lnk sandbox run refuses (exit 5) naming it, and logs the refusal once;
// with --degraded it runs, says so on stderr and logs it, and the command
// really runs without landlock (a program [commands] leaves out runs)
// while seccomp still holds.
func TestRefusedWithoutLandlockUnlessDegraded(t *testing.T) {
	w := newWorld(t)
	code, _, errs := lnkWithout(t, "landlock", "sandbox", "run", "--internet=false", "--", "sh", "-c", "exit 0")
	if code != 5 || !strings.Contains(errs, "landlock") || !strings.Contains(errs, "--degraded") {
		t.Fatalf("without landlock: exit %d, %q; want 5 naming landlock and --degraded", code, errs)
	}
	if got := auditLines(t, w.home, "refuse", "landlock"); got != 1 {
		t.Fatalf("the refusal was logged %d times, want once", got)
	}
	script := `id -u >/dev/null && echo RAN-UNLISTED; unshare -U sh -c 'echo UNSHARED' 2>/dev/null; echo DONE`
	code, out, errs := lnkWithout(t, "landlock", "sandbox", "run", "--degraded", "--json-status", "--internet=false",
		"--command", "unshare", "--", "sh", "-c", script)
	if code != 0 || !strings.Contains(out, "DONE") {
		t.Fatalf("--degraded: exit %d, out %q, err %q", code, out, errs)
	}
	if !strings.Contains(errs, "degraded: running without landlock") || !strings.Contains(errs, `"landlock":false`) ||
		!strings.Contains(errs, `"seccomp":true`) {
		t.Fatalf("--degraded did not say what it runs without: %q", errs)
	}
	if !strings.Contains(out, "RAN-UNLISTED") {
		t.Fatalf("a program [commands] leaves out did not run: landlock was not really absent (%q)", out)
	}
	if strings.Contains(out, "UNSHARED") {
		t.Fatalf("unshare(CLONE_NEWUSER) worked: seccomp did not hold under --degraded (%q)", out)
	}
	if got := auditLines(t, w.home, "warn", "degraded"); got != 1 {
		t.Fatalf("the degraded start was logged %d times, want once", got)
	}
	// The control: the same command with landlock there is refused id.
	code, out, _ = lnk(t, "sandbox", "run", "--internet=false", "--", "sh", "-c", script)
	if code != 0 || strings.Contains(out, "RAN-UNLISTED") {
		t.Fatalf("with landlock: exit %d, %q; an unlisted program ran", code, out)
	}
}

// TestRefusedWithoutSeccompUnlessDegraded: the same on a kernel without
// seccomp: refused (exit 5) naming it and logged once; with --degraded it
// runs, says so and logs it, and the command really runs without the
// filter (unshare(CLONE_NEWUSER), which the filter refuses, works) while
// landlock still holds (a program [commands] leaves out does not run).
func TestRefusedWithoutSeccompUnlessDegraded(t *testing.T) {
	w := newWorld(t)
	code, _, errs := lnkWithout(t, "seccomp", "sandbox", "run", "--internet=false", "--", "sh", "-c", "exit 0")
	if code != 5 || !strings.Contains(errs, "lacks seccomp,") {
		t.Fatalf("without seccomp: exit %d, %q; want 5 naming seccomp alone", code, errs)
	}
	if got := auditLines(t, w.home, "refuse", "seccomp"); got != 1 {
		t.Fatalf("the refusal was logged %d times, want once", got)
	}
	script := `id -u >/dev/null 2>&1 && echo RAN-UNLISTED; unshare -U sh -c 'echo UNSHARED'; echo DONE`
	code, out, errs := lnkWithout(t, "seccomp", "sandbox", "run", "--degraded", "--json-status", "--internet=false",
		"--command", "unshare", "--", "sh", "-c", script)
	if code != 0 || !strings.Contains(out, "DONE") {
		t.Fatalf("--degraded: exit %d, out %q, err %q", code, out, errs)
	}
	if !strings.Contains(errs, "degraded: running without seccomp") || !strings.Contains(errs, `"seccomp":false`) ||
		!strings.Contains(errs, `"landlock":true`) {
		t.Fatalf("--degraded did not say what it runs without: %q", errs)
	}
	if !strings.Contains(out, "UNSHARED") {
		t.Fatalf("unshare(CLONE_NEWUSER) was refused: seccomp was not really absent (%q, %q)", out, errs)
	}
	if strings.Contains(out, "RAN-UNLISTED") {
		t.Fatalf("a program [commands] leaves out ran: landlock did not hold under --degraded (%q)", out)
	}
	if got := auditLines(t, w.home, "warn", "degraded"); got != 1 {
		t.Fatalf("the degraded start was logged %d times, want once", got)
	}
}
