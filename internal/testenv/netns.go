package testenv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// netnsEnv marks a test child running in user and network namespaces of
// its own (InNetns).
const netnsEnv = "LNK_TESTENV_NETNS"

// NetnsChild reports whether this process is InNetns's namespace child,
// for a TestMain that readies the namespace before any test runs.
func NetnsChild() bool { return os.Getenv(netnsEnv) == "1" }

// InNetns reports whether this is the namespace child of t. In the
// parent it runs t again in a child inside new user and network
// namespaces (whatever it dials stays on this machine: the namespace has
// only the interfaces the test makes), fails t with the child's output if
// the child fails, and returns false; where the kernel has no such
// namespaces it is Require's skip. In the child, loopback is up.
func InNetns(t *testing.T) bool {
	t.Helper()
	if NetnsChild() {
		if err := LinkUp("lo"); err != nil {
			t.Fatalf("loopback up: %v", err)
		}
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
		Require(t, false, "user and network namespaces ("+err.Error()+")")
		return false
	}
	if err != nil {
		t.Fatalf("in its network namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the namespace child did not pass %s:\n%s", t.Name(), out)
	}
	t.Logf("in its network namespace:\n%s", out)
	return false
}

// AddInterface makes an interface called name, with nothing behind it,
// in the calling thread's network namespace, and brings it up: a place
// for the addresses a test gives this "machine". It is one end of a veth
// pair whose other end (name+"p") stays here too, as not every kernel
// has the dummy driver while a netns test needs veth anyway.
func AddInterface(name string) error {
	peer := append(make([]byte, unix.SizeofIfInfomsg), rtattr(unix.IFLA_IFNAME, append([]byte(name+"p"), 0))...)
	info := append(rtattr(unix.IFLA_INFO_KIND, append([]byte("veth"), 0)), rtattr(unix.IFLA_INFO_DATA, rtattr(vethInfoPeer, peer))...)
	body := append(make([]byte, unix.SizeofIfInfomsg), rtattr(unix.IFLA_IFNAME, append([]byte(name), 0))...)
	body = append(body, rtattr(unix.IFLA_LINKINFO, info)...)
	if err := rtnetlink(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL, body); err != nil {
		return fmt.Errorf("adding interface %s: %w", name, err)
	}
	if err := LinkUp(name + "p"); err != nil {
		return err
	}
	return LinkUp(name)
}

// vethInfoPeer is VETH_INFO_PEER (linux/veth.h), which x/sys/unix lacks.
const vethInfoPeer = 1

// AddAddr gives interface name the address p (IPv6 without duplicate
// address detection, so it is usable at once).
func AddAddr(name string, p netip.Prefix) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	msg := make([]byte, unix.SizeofIfAddrmsg)
	msg[0] = unix.AF_INET
	if p.Addr().Is6() {
		msg[0] = unix.AF_INET6
		msg[2] = unix.IFA_F_NODAD
	}
	msg[1] = byte(p.Bits())
	binary.NativeEndian.PutUint32(msg[4:], uint32(ifi.Index))
	a := p.Addr().AsSlice()
	msg = append(msg, rtattr(unix.IFA_LOCAL, a)...)
	msg = append(msg, rtattr(unix.IFA_ADDRESS, a)...)
	if err := rtnetlink(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, msg); err != nil {
		return fmt.Errorf("adding %s to %s: %w", p, name, err)
	}
	return nil
}

// DelAddr takes the address p from interface name.
func DelAddr(name string, p netip.Prefix) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	msg := make([]byte, unix.SizeofIfAddrmsg)
	msg[0] = unix.AF_INET
	if p.Addr().Is6() {
		msg[0] = unix.AF_INET6
	}
	msg[1] = byte(p.Bits())
	binary.NativeEndian.PutUint32(msg[4:], uint32(ifi.Index))
	msg = append(msg, rtattr(unix.IFA_LOCAL, p.Addr().AsSlice())...)
	if err := rtnetlink(unix.RTM_DELADDR, 0, msg); err != nil {
		return fmt.Errorf("taking %s from %s: %w", p, name, err)
	}
	return nil
}

// LinkUp brings interface name up.
func LinkUp(name string) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	msg := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(msg[4:], uint32(ifi.Index))
	binary.NativeEndian.PutUint32(msg[8:], unix.IFF_UP)  // flags
	binary.NativeEndian.PutUint32(msg[12:], unix.IFF_UP) // change
	if err := rtnetlink(unix.RTM_NEWLINK, 0, msg); err != nil {
		return fmt.Errorf("%s up: %w", name, err)
	}
	return nil
}

// rtnetlink sends one request and waits for its acknowledgement.
func rtnetlink(typ, flags uint16, body []byte) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|flags)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if n < unix.SizeofNlMsghdr+4 || binary.NativeEndian.Uint16(buf[4:]) != unix.NLMSG_ERROR {
		return fmt.Errorf("an rtnetlink answer of %d bytes that is no acknowledgement", n)
	}
	if e := int32(binary.NativeEndian.Uint32(buf[unix.SizeofNlMsghdr:])); e != 0 {
		return unix.Errno(-e)
	}
	return nil
}

func rtattr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(data)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
