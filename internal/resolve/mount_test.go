package resolve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

const mountChildEnv = "LNK_RESOLVE_MOUNT_CHILD"

// TestMountCrossingRefused mounts a tmpfs beneath the root (in a user and
// mount namespace of a child process, so as any user and without touching
// the machine's mounts) and shows that a name crossing onto it is
// ErrEscape, with openat2 and with the fallback walk; and that a bind
// mount of the same filesystem is refused by openat2 (the fallback cannot
// see it, as the package doc says).
func TestMountCrossingRefused(t *testing.T) {
	if dir := os.Getenv(mountChildEnv); dir != "" {
		if err := mountChild(dir); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("PASS: mount crossings refused")
		os.Exit(0)
	}
	base := testTree(t)
	must(t, os.Mkdir(filepath.Join(base, "root", "mnt"), 0o700))
	must(t, os.Mkdir(filepath.Join(base, "root", "bind"), 0o700))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMountCrossingRefused$", "-test.count=1")
	cmd.Env = append(os.Environ(), mountChildEnv+"="+base)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		testenv.Require(t, false, "user namespaces for a child ("+err.Error()+")")
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// mountChild runs in the child's own user and mount namespaces.
func mountChild(base string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	root := filepath.Join(base, "root")
	if err := unix.Mount("tmpfs", filepath.Join(root, "mnt"), "tmpfs", 0, "size=64k"); err != nil {
		return fmt.Errorf("mounting tmpfs: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, "mnt", "x"), []byte("mounted"), 0o600); err != nil {
		return err
	}
	if err := unix.Mount(filepath.Join(root, "a"), filepath.Join(root, "bind"), "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	r, err := OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, rr := range []*Root{r, r.forceFallback()} {
		for _, name := range []string{"mnt/x", "mnt"} {
			if _, _, err := rr.ReadFile(name, 100); !errors.Is(err, ErrEscape) {
				return fmt.Errorf("fallback=%v: ReadFile(%q) = %v; want ErrEscape", rr.fallback, name, err)
			}
		}
		if err := rr.MkdirAll("mnt/new", 0); !errors.Is(err, ErrEscape) {
			return fmt.Errorf("fallback=%v: MkdirAll across a mount = %v; want ErrEscape", rr.fallback, err)
		}
	}
	if _, _, err := r.ReadFile("bind/b/c.txt", 100); !errors.Is(err, ErrEscape) {
		return fmt.Errorf("openat2 through a bind mount = %v; want ErrEscape", err)
	}
	return nil
}
