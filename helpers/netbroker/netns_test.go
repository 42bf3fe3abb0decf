package netbroker

import (
	"fmt"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// The addresses the child puts on its loopback: a stand-in public host,
// and the cloud metadata address, served so a test can prove the proxy
// never reached it.
const (
	publicAddr   = "203.0.113.10"
	metadataAddr = "169.254.169.254"
)

func TestMain(m *testing.M) {
	if testenv.NetnsChild() {
		if err := setupNetns(); err != nil {
			fmt.Fprintf(os.Stderr, "netns child: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// inNetns is testenv.InNetns: this test run again in user and network
// namespaces of its own, readied by TestMain (setupNetns).
func inNetns(t *testing.T) bool {
	t.Helper()
	return testenv.InNetns(t)
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
