package netclass

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// addrMsg is one rtnetlink message about an address, as [OwnWatch] reads
// them: a notice, or part of the answer to its own dump (pid: its own
// socket's port id; a notice carries the pid and seq of the request that
// caused it, or 0).
type addrMsg struct {
	pid  uint32
	seq  uint32
	kind uint16     // RTM_NEWADDR, RTM_DELADDR, or 0 for the rest
	addr netip.Addr // for RTM_NEWADDR and RTM_DELADDR
	done bool       // NLMSG_DONE: the dump is complete
	intr bool       // NLM_F_DUMP_INTR: the dump saw a change; list again
	err  error      // NLMSG_ERROR with a non-zero errno
}

// parseAddrMsgs reads the messages of one rtnetlink datagram. A message
// it cannot read whole is an error (the watch then refuses), never
// skipped: a missed RTM_NEWADDR would be an own address let through.
func parseAddrMsgs(b []byte) ([]addrMsg, error) {
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, fmt.Errorf("a malformed rtnetlink message: %w", err)
	}
	out := make([]addrMsg, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		am := addrMsg{pid: m.Header.Pid, seq: m.Header.Seq, intr: m.Header.Flags&unix.NLM_F_DUMP_INTR != 0}
		switch m.Header.Type {
		case unix.NLMSG_DONE:
			am.done = true
		case unix.NLMSG_ERROR:
			if len(m.Data) < 4 {
				return nil, errors.New("a truncated rtnetlink error")
			}
			if e := int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
				am.err = unix.Errno(-e)
			}
		case unix.NLMSG_OVERRUN:
			return nil, errOverflow
		case unix.RTM_NEWADDR, unix.RTM_DELADDR:
			a, err := ifaddrAddr(m)
			if err != nil {
				return nil, err
			}
			if a.IsValid() { // else a family other than IPv4 and IPv6
				am.kind, am.addr = m.Header.Type, a
			}
		}
		out = append(out, am)
	}
	return out, nil
}

// ifaddrAddr is the local address an RTM_NEWADDR or RTM_DELADDR names:
// IFA_LOCAL where present (on a point-to-point link IFA_ADDRESS is the
// peer's), else IFA_ADDRESS; sized by the message's family. An address
// of another family (a dump lists every family: MCTP, …) is the zero
// Addr: no inet socket reaches it.
func ifaddrAddr(m *syscall.NetlinkMessage) (netip.Addr, error) {
	if len(m.Data) < unix.SizeofIfAddrmsg {
		return netip.Addr{}, errors.New("a truncated rtnetlink address message")
	}
	size := 0
	switch m.Data[0] {
	case unix.AF_INET:
		size = 4
	case unix.AF_INET6:
		size = 16
	default:
		return netip.Addr{}, nil
	}
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("a malformed rtnetlink address message: %w", err)
	}
	var local, address []byte
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.IFA_LOCAL:
			local = a.Value
		case unix.IFA_ADDRESS:
			address = a.Value
		}
	}
	v := local
	if v == nil {
		v = address
	}
	if len(v) != size {
		return netip.Addr{}, errors.New("an rtnetlink address message without an address of its family's size")
	}
	a, _ := netip.AddrFromSlice(v)
	return a.Unmap(), nil
}
