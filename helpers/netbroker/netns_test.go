package netbroker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// netnsEnv marks the test child that runs inside a user and network
// namespace of its own, where loopback is the only interface and the
// test's "internet" lives on addresses added to it. Nothing the child
// dials can leave the machine.
const netnsEnv = "LNK_NETBROKER_NETNS"

// The addresses the child puts on its loopback: a stand-in public host,
// and the cloud metadata address, served so a test can prove the proxy
// never reached it.
const (
	publicAddr   = "203.0.113.10"
	metadataAddr = "169.254.169.254"
)

func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) == "1" {
		if err := setupNetns(); err != nil {
			fmt.Fprintf(os.Stderr, "netns child: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// inNetns reports whether this is the namespace child. In the parent it
// runs the calling test again in a child inside new user and network
// namespaces, fails t with the child's output if the child fails, and
// returns false.
func inNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		testenv.Require(t, false, "user and network namespaces ("+err.Error()+")")
		return false
	}
	if err != nil {
		t.Fatalf("in its network namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the namespace child did not pass %s:\n%s", t.Name(), out)
	}
	return false
}

// setupNetns brings loopback up and adds the test's addresses to it.
func setupNetns() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	for i, a := range []string{publicAddr, metadataAddr} {
		alias, err := unix.NewIfreq(fmt.Sprintf("lo:%d", i+1))
		if err != nil {
			return err
		}
		if err := alias.SetInet4Addr(net.ParseIP(a).To4()); err != nil {
			return err
		}
		if err := unix.IoctlIfreq(fd, unix.SIOCSIFADDR, alias); err != nil {
			return fmt.Errorf("adding %s to lo: %w", a, err)
		}
	}
	return nil
}
