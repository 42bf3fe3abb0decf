package netbroker

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// A test host of its own: a network namespace the test makes, joined to
// the test's namespace by a veth pair, so its address is neither
// loopback nor this machine's own, and nothing sent to it can leave the
// machine. The test's end and the host's share one /24.

// hostNet makes the host's namespace and the veth pair between it and
// the calling process's network namespace (which must be one the test
// made): ourAddr/24 on our end, hostAddr/24 on the host's, both up. It
// returns a TCP listener on hostAddr:port inside the host's namespace.
func hostNet(ourAddr, hostAddr string, port int) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		// The namespace dance is on one locked thread; a thread that
		// could not come back to its namespace is never unlocked, so it
		// ends with this goroutine.
		runtime.LockOSThread()
		ln, back, err := hostNetLocked(ourAddr, hostAddr, port)
		if back {
			runtime.UnlockOSThread()
		}
		done <- result{ln, err}
	}()
	r := <-done
	return r.ln, r.err
}

func hostNetLocked(ourAddr, hostAddr string, port int) (ln net.Listener, back bool, err error) {
	ours, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, true, err
	}
	defer ours.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return nil, true, fmt.Errorf("unshare a network namespace: %w", err)
	}
	host, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, false, err
	}
	defer host.Close()
	if err := unix.Setns(int(ours.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, false, err
	}
	if err := addVeth("lnktest0", "lnktest1", int(host.Fd())); err != nil {
		return nil, true, err
	}
	if err := ifaceUp("lnktest0", ourAddr); err != nil {
		return nil, true, err
	}
	if err := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, true, err
	}
	err = ifaceUp("lo", "")
	if err == nil {
		err = ifaceUp("lnktest1", hostAddr)
	}
	if err == nil {
		ln, err = net.Listen("tcp", net.JoinHostPort(hostAddr, fmt.Sprint(port)))
	}
	if e := unix.Setns(int(ours.Fd()), unix.CLONE_NEWNET); e != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, false, e
	}
	return ln, true, err
}

// addVeth asks the kernel (rtnetlink) for a veth pair: name here, peer
// in the network namespace at nsFD.
func addVeth(name, peer string, nsFD int) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifinfo := make([]byte, unix.SizeofIfInfomsg) // AF_UNSPEC, no index, no flags
	peerMsg := cat(ifinfo, rtattr(unix.IFLA_IFNAME, cstr(peer)), rtattr(unix.IFLA_NET_NS_FD, u32(uint32(nsFD))))
	info := cat(rtattr(unix.IFLA_INFO_KIND, cstr("veth")), rtattr(unix.IFLA_INFO_DATA, rtattr(vethInfoPeer, peerMsg)))
	body := cat(ifinfo, rtattr(unix.IFLA_IFNAME, cstr(name)), rtattr(unix.IFLA_LINKINFO, info))
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWLINK)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("rtnetlink: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("rtnetlink: %w", err)
	}
	if n < unix.SizeofNlMsghdr+4 || binary.NativeEndian.Uint16(buf[4:]) != unix.NLMSG_ERROR {
		return fmt.Errorf("rtnetlink: an answer of %d bytes that is no ack", n)
	}
	if e := int32(binary.NativeEndian.Uint32(buf[unix.SizeofNlMsghdr:])); e != 0 {
		return fmt.Errorf("adding veth %s: %w", name, unix.Errno(-e))
	}
	return nil
}

// ifaceUp gives name the address addr/24 (none if "") and brings it up,
// in the calling thread's network namespace.
func ifaceUp(name, addr string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if addr != "" {
		for _, set := range []struct {
			req uint
			ip  net.IP
		}{{unix.SIOCSIFADDR, net.ParseIP(addr).To4()}, {unix.SIOCSIFNETMASK, net.IPv4(255, 255, 255, 0).To4()}} {
			ifr, err := unix.NewIfreq(name)
			if err != nil {
				return err
			}
			if err := ifr.SetInet4Addr(set.ip); err != nil {
				return err
			}
			if err := unix.IoctlIfreq(fd, set.req, ifr); err != nil {
				return fmt.Errorf("%s: address %s: %w", name, addr, err)
			}
		}
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: flags: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s up: %w", name, err)
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

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func cstr(s string) []byte { return append([]byte(s), 0) }

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// vethInfoPeer is VETH_INFO_PEER (linux/veth.h), which x/sys/unix lacks.
const vethInfoPeer = 1
