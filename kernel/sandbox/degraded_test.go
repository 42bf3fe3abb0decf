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

// A kernel without landlock, for real: the test binary, started again
// with withoutLandlockEnv set, installs a seccomp filter on itself that
// makes landlock_create_ruleset fail with ENOSYS, as on a kernel built
// without it, and execs lnk. Everything lnk then starts (bubblewrap,
// lnk-init, the command) inherits the filter: for that process tree the
// kernel has no landlock. Nothing in lnk is told it is a test.

const withoutLandlockEnv = "LNK_TEST_EXEC_WITHOUT_LANDLOCK"

func init() {
	v := os.Getenv(withoutLandlockEnv)
	if v == "" {
		return
	}
	var argv []string
	if err := json.Unmarshal([]byte(v), &argv); err != nil || len(argv) == 0 {
		os.Stderr.WriteString("bad " + withoutLandlockEnv + "\n")
		os.Exit(99)
	}
	os.Unsetenv(withoutLandlockEnv)
	runtime.LockOSThread() // the filter and NO_NEW_PRIVS are this thread's; it execs
	if err := denyLandlock(); err != nil {
		os.Stderr.WriteString("seccomp: " + err.Error() + "\n")
		os.Exit(99)
	}
	err := unix.Exec(argv[0], argv, os.Environ())
	os.Stderr.WriteString("exec: " + err.Error() + "\n")
	os.Exit(99)
}

// denyLandlock installs: on x86-64, landlock_create_ruleset -> ENOSYS;
// every other call allowed.
func denyLandlock() error {
	const (
		archX8664 = 0xc000003e
		retAllow  = 0x7fff0000
		retErrno  = 0x00050000
	)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4},                        // arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: archX8664, Jt: 0, Jf: 3}, // other arch: allow
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},                        // nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_LANDLOCK_CREATE_RULESET, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: retErrno | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: retAllow},
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

// lnkWithoutLandlock runs lnk args under that filter.
func lnkWithoutLandlock(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	testenv.Require(t, runtime.GOARCH == "amd64", "x86-64 (the test's seccomp filter is written for it)")
	testenv.Bin(t, "lnk-init")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(append([]string{testenv.Bin(t, "lnk")}, args...))
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), withoutLandlockEnv+"="+string(argv))
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
	code, _, errs := lnkWithoutLandlock(t, "sandbox", "run", "--internet=false", "--", "sh", "-c", "exit 0")
	if code != 5 || !strings.Contains(errs, "landlock") || !strings.Contains(errs, "--degraded") {
		t.Fatalf("without landlock: exit %d, %q; want 5 naming landlock and --degraded", code, errs)
	}
	if got := auditLines(t, w.home, "refuse", "landlock"); got != 1 {
		t.Fatalf("the refusal was logged %d times, want once", got)
	}
	script := `id -u >/dev/null && echo RAN-UNLISTED; unshare -U true 2>/dev/null && echo UNSHARED; echo DONE`
	code, out, errs := lnkWithoutLandlock(t, "sandbox", "run", "--degraded", "--json-status", "--internet=false",
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
