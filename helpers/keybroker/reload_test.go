package keybroker

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/wire"
)

// netClient hands the broker a netbroker channel and returns its client.
func netClient(t *testing.T, s *started) *sealedgrant.NetClient {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	theirs := os.NewFile(uintptr(fds[0]), "net-broker-end")
	defer theirs.Close()
	if _, err := s.kc.NetChannel(ctx(t), agentA, theirs); err != nil {
		t.Fatal(err)
	}
	ncl, err := wire.NewClient(os.NewFile(uintptr(fds[1]), "net-netbroker-end"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ncl.Close() })
	return sealedgrant.NewNetClient(ncl)
}

// TestReloadSecrets: a secret granted after the broker started is given
// only once the kernel hands a fresh secrets.toml fd, and one removed is
// refused after the next reload.
func TestReloadSecrets(t *testing.T) {
	s := startBroker(t)
	c := ctx(t)
	nc := netClient(t, s)
	if err := secrets.Grant(s.home, "OTHER_TOKEN", agentA); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nc.SealedSecret(c, agentA, "OTHER_TOKEN"); !errors.Is(err, ErrRefused) {
		t.Fatalf("before reload: %v", err)
	}
	reload := func() {
		t.Helper()
		dir, err := secrets.OpenDir(s.home, false)
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		f, err := secrets.OpenFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := s.kc.ReloadSecrets(c, f); err != nil {
			t.Fatal(err)
		}
	}
	reload()
	v, host, err := nc.SealedSecret(c, agentA, "OTHER_TOKEN")
	if err != nil || string(v.Bytes()) != "other-value" || host != "api.example.com" {
		t.Fatalf("after reload: %v %q", err, host)
	}
	v.Destroy()
	if err := secrets.Remove(s.home, "OTHER_TOKEN"); err != nil {
		t.Fatal(err)
	}
	reload()
	if _, _, err := nc.SealedSecret(c, agentA, "OTHER_TOKEN"); !errors.Is(err, ErrRefused) {
		t.Fatalf("after removal and reload: %v", err)
	}
	// No fd: there are no secrets now.
	if err := s.kc.ReloadSecrets(c, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nc.SealedSecret(c, agentA, "GITHUB_TOKEN"); !errors.Is(err, ErrRefused) {
		t.Fatalf("after a reload without a file: %v", err)
	}
}

// TestNetChannelIsHandedOnce: a second netbroker channel is a protocol
// violation that closes the kernel's channel.
func TestNetChannelIsHandedOnce(t *testing.T) {
	s := startBroker(t)
	netClient(t, s)
	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	f := os.NewFile(uintptr(fds[0]), "second")
	defer f.Close()
	defer unix.Close(fds[1])
	if _, err := s.kc.NetChannel(ctx(t), agentA, f); err == nil {
		t.Fatal("a second netbroker channel was taken")
	}
}
