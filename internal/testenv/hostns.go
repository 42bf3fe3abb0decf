package testenv

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Hosts is a network namespace of test hosts beside the test's own (one
// InNetns made), joined to it by a veth pair: addresses there are
// neither loopback nor this "machine's" own, and nothing sent to them
// leaves the machine.
type Hosts struct {
	ns *os.File // the hosts' namespace
}

// AddrPair is one address on each end of the pair: Ours on the test's
// end (so one of its own), Theirs on the hosts' end, in one prefix.
type AddrPair struct{ Ours, Theirs netip.Prefix }

// NewHosts makes the hosts' namespace and the veth pair name (here) and
// name+"p" (there), gives each end its addresses, and brings both up.
// Call it from a test's namespace child (InNetns), never the machine's.
func NewHosts(name string, pairs []AddrPair) (*Hosts, error) {
	var h *Hosts
	err := onThread(func(ours *os.File) (bool, error) {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return true, fmt.Errorf("unshare a network namespace: %w", err)
		}
		ns, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			return false, err
		}
		h = &Hosts{ns: ns}
		if err := LinkUp("lo"); err != nil {
			return false, err
		}
		if err := unix.Setns(int(ours.Fd()), unix.CLONE_NEWNET); err != nil {
			return false, err
		}
		if err := AddInterface(name); err != nil {
			return true, err
		}
		if err := moveLink(name+"p", int(ns.Fd())); err != nil {
			return true, err
		}
		for _, p := range pairs {
			if err := AddAddr(name, p.Ours); err != nil {
				return true, err
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	err = h.in(func() error {
		for _, p := range pairs {
			if err := AddAddr(name+"p", p.Theirs); err != nil {
				return err
			}
		}
		return LinkUp(name + "p")
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Listen listens on addr in the hosts' namespace.
func (h *Hosts) Listen(network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := h.in(func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// in runs f on a thread in the hosts' namespace, then comes back.
func (h *Hosts) in(f func() error) error {
	return onThread(func(ours *os.File) (bool, error) {
		if err := unix.Setns(int(h.ns.Fd()), unix.CLONE_NEWNET); err != nil {
			return true, err
		}
		ferr := f()
		if err := unix.Setns(int(ours.Fd()), unix.CLONE_NEWNET); err != nil {
			return false, err
		}
		return true, ferr
	})
}

// onThread runs f on a locked thread of its own, handing it the
// thread's namespace to come back to; a thread f could not bring back
// (back false) is never unlocked, so it ends with its goroutine.
func onThread(f func(ours *os.File) (back bool, err error)) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ours, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer ours.Close()
		back, err := f(ours)
		if back {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// moveLink moves interface name into the network namespace at nsFD.
func moveLink(name string, nsFD int) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	msg := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(msg[4:], uint32(ifi.Index))
	msg = append(msg, rtattr(unix.IFLA_NET_NS_FD, binary.NativeEndian.AppendUint32(nil, uint32(nsFD)))...)
	if err := rtnetlink(unix.RTM_NEWLINK, 0, msg); err != nil {
		return fmt.Errorf("moving %s to the hosts' namespace: %w", name, err)
	}
	return nil
}
