package netclass

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// nlmsg builds one rtnetlink message for the parser's tests.
func nlmsg(typ uint16, flags uint16, seq uint32, body []byte) []byte {
	b := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body)+3)
	binary.NativeEndian.PutUint32(b[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(b[4:], typ)
	binary.NativeEndian.PutUint16(b[6:], flags)
	binary.NativeEndian.PutUint32(b[8:], seq)
	b = append(b, body...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func ifaddrBody(family byte, attrs ...[]byte) []byte {
	b := make([]byte, unix.SizeofIfAddrmsg)
	b[0] = family
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

func nlattr(typ uint16, v []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(4+len(v)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// The parser takes IFA_LOCAL over IFA_ADDRESS (a point-to-point link's
// peer), IFA_ADDRESS alone for IPv6, skips other families, and refuses
// what it cannot read whole.
func TestParseAddrMsgs(t *testing.T) {
	ptp := nlmsg(unix.RTM_NEWADDR, 0, 0, ifaddrBody(unix.AF_INET, nlattr(unix.IFA_ADDRESS, []byte{10, 0, 0, 2}), nlattr(unix.IFA_LOCAL, []byte{10, 0, 0, 1})))
	v6 := nlmsg(unix.RTM_DELADDR, 0, 0, ifaddrBody(unix.AF_INET6, nlattr(unix.IFA_ADDRESS, []byte{0x20, 1, 0xd, 0xb8, 15: 5})))
	other := nlmsg(unix.RTM_NEWADDR, 0, 0, ifaddrBody(45, nlattr(unix.IFA_LOCAL, []byte{9})))
	done := nlmsg(unix.NLMSG_DONE, unix.NLM_F_MULTI, 7, []byte{0, 0, 0, 0})
	msgs, err := parseAddrMsgs(append(append(append(ptp, v6...), other...), done...))
	if err != nil || len(msgs) != 4 {
		t.Fatalf("%+v, %v", msgs, err)
	}
	if msgs[0].kind != unix.RTM_NEWADDR || msgs[0].addr.String() != "10.0.0.1" {
		t.Errorf("point-to-point: %+v", msgs[0])
	}
	if msgs[1].kind != unix.RTM_DELADDR || msgs[1].addr.String() != "2001:db8::5" {
		t.Errorf("IPv6: %+v", msgs[1])
	}
	if msgs[2].kind != 0 || !msgs[3].done || msgs[3].seq != 7 {
		t.Errorf("other family, done: %+v %+v", msgs[2], msgs[3])
	}
	for name, b := range map[string][]byte{
		"ifaddrmsg cut short": nlmsg(unix.RTM_NEWADDR, 0, 0, []byte{unix.AF_INET}),
		"no address":          nlmsg(unix.RTM_NEWADDR, 0, 0, ifaddrBody(unix.AF_INET)),
		"IPv6 size for IPv4":  nlmsg(unix.RTM_NEWADDR, 0, 0, ifaddrBody(unix.AF_INET, nlattr(unix.IFA_LOCAL, make([]byte, 16)))),
		"length past the end": ptp[:len(ptp)-4],
		"error cut short":     nlmsg(unix.NLMSG_ERROR, 0, 0, []byte{1}),
		"overrun":             nlmsg(unix.NLMSG_OVERRUN, 0, 0, nil),
	} {
		if _, err := parseAddrMsgs(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// FuzzParseAddrMsgs: whatever a datagram holds, the parser neither
// panics nor yields an address of the wrong family's size; an address
// message always carries a valid address.
func FuzzParseAddrMsgs(f *testing.F) {
	f.Add(nlmsg(unix.RTM_NEWADDR, 0, 0, ifaddrBody(unix.AF_INET, nlattr(unix.IFA_LOCAL, []byte{198, 51, 100, 5}))))
	f.Add(nlmsg(unix.RTM_NEWADDR, unix.NLM_F_MULTI, 3, ifaddrBody(unix.AF_INET6, nlattr(unix.IFA_ADDRESS, []byte{0x20, 1, 0xd, 0xb8, 15: 5}))))
	f.Add(nlmsg(unix.NLMSG_ERROR, 0, 3, []byte{0xf9, 0xff, 0xff, 0xff}))
	f.Add(nlmsg(unix.RTM_NEWADDR, 0, 0, []byte{2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, err := parseAddrMsgs(b)
		if err != nil {
			return
		}
		for _, m := range msgs {
			if m.kind != 0 && (!m.addr.IsValid() || m.addr.Is4In6()) {
				t.Fatalf("an address message without a usable address: %+v", m)
			}
		}
	})
}
