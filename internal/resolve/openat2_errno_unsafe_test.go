package resolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

const enosysChildEnv = "LNK_RESOLVE_ENOSYS_CHILD"

// TestENOSYSTakesTheWalk runs the read refusals in a child process whose
// seccomp filter answers ENOSYS to openat2, as a kernel before 5.6 or a
// container's filter would: the resolver walks each component itself and
// every answer is the same as with openat2. No test hook is involved.
func TestENOSYSTakesTheWalk(t *testing.T) {
	if base := os.Getenv(enosysChildEnv); base != "" {
		if err := enosysChild(base); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("PASS: openat2 hidden, every refusal held")
		os.Exit(0)
	}
	arch := auditArch()
	testenv.Require(t, arch != 0, "a seccomp audit arch for "+runtime.GOARCH)
	base := testTree(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestENOSYSTakesTheWalk$", "-test.count=1")
	cmd.Env = append(os.Environ(), enosysChildEnv+"="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// hideOpenat2 installs, on every thread, a filter answering errno to
// openat2 and allowing everything else.
func hideOpenat2(errno unix.Errno) error {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 0, Jf: 3, K: auditArch()},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_OPENAT2},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return e
	}
	return nil
}

func enosysChild(base string) error {
	if err := hideOpenat2(unix.ENOSYS); err != nil {
		return fmt.Errorf("installing the filter: %w", err)
	}
	how := unix.OpenHow{Flags: unix.O_PATH, Resolve: resolveFlags}
	if _, err := unix.Openat2(unix.AT_FDCWD, ".", &how); err != unix.ENOSYS {
		return fmt.Errorf("openat2 still answers (%v)", err)
	}
	r, err := OpenRoot(filepath.Join(base, "root"))
	if err != nil {
		return err
	}
	defer r.Close()
	for _, c := range readCases {
		_, _, err := r.ReadFile(c.name, 1<<20)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			return fmt.Errorf("ReadFile(%q) = %v; want %v", c.name, err, c.want)
		}
	}
	if err := r.MkdirAll("made/x", 0); err != nil {
		return err
	}
	if _, err := r.WriteFile("made/x/f", []byte("x"), WriteOptions{Expect: Absent}); err != nil {
		return err
	}
	if err := r.MkdirAll("ln-out/x", 0); !errors.Is(err, ErrLink) {
		return fmt.Errorf("MkdirAll through a link = %v", err)
	}
	return nil
}

const errnoChildEnv = "LNK_RESOLVE_ERRNO_CHILD"

// TestOpenat2RetriesAreBounded runs children whose openat2 always answers
// EAGAIN, then EXDEV, as a tree renamed without pause would make it: the
// resolver retries a bounded number of times, then says ErrBusy, or
// ErrEscape for an EXDEV that stays; it never hangs and never falls back
// to the walk.
func TestOpenat2RetriesAreBounded(t *testing.T) {
	if v := os.Getenv(errnoChildEnv); v != "" {
		if err := errnoChild(v); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("PASS:", v)
		os.Exit(0)
	}
	testenv.Require(t, auditArch() != 0, "a seccomp audit arch for "+runtime.GOARCH)
	base := testTree(t)
	for _, e := range []string{"EAGAIN", "EXDEV"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOpenat2RetriesAreBounded$", "-test.count=1")
		cmd.Env = append(os.Environ(), errnoChildEnv+"="+e+":"+base)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("child %s: %v\n%s", e, err, out)
		}
		t.Logf("%s", out)
	}
}

func errnoChild(v string) error {
	name, base, _ := strings.Cut(v, ":")
	errno, want := unix.EAGAIN, ErrBusy
	if name == "EXDEV" {
		errno, want = unix.EXDEV, ErrEscape
	}
	r, err := OpenRoot(filepath.Join(base, "root"))
	if err != nil {
		return err
	}
	defer r.Close()
	if err := hideOpenat2(errno); err != nil {
		return fmt.Errorf("installing the filter: %w", err)
	}
	for _, name := range []string{"f.txt", "a/b/c.txt"} {
		if _, _, err := r.ReadFile(name, 100); !errors.Is(err, want) || !errors.Is(err, errno) {
			return fmt.Errorf("ReadFile(%q) with openat2 answering %v = %v; want %v", name, errno, err, want)
		}
	}
	if err := r.MkdirAll("a/new", 0); !errors.Is(err, want) {
		return fmt.Errorf("MkdirAll with openat2 answering %v = %v; want %v", errno, err, want)
	}
	return nil
}
