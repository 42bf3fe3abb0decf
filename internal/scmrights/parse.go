package scmrights

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/refusal"
)

// Parse appends every fd of the control data oob (as the kernel wrote
// it) to fds. Anything but a well-formed SCM_RIGHTS message is a
// *[Refusal]; the fds found are still returned, so the caller closes
// them. It walks the cmsghdrs itself, as unix.ParseSocketControlMessage
// does, without its allocations, and checks what unix.ParseUnixRights
// does not: that the rights are a whole number of fds.
func Parse(fds []int, oob []byte) ([]int, error) {
	var bad error
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		var l int
		if hdr == 16 {
			l = int(binary.NativeEndian.Uint64(oob))
		} else {
			l = int(binary.NativeEndian.Uint32(oob))
		}
		level := int32(binary.NativeEndian.Uint32(oob[hdr-8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[hdr-4:]))
		if l < hdr || l > len(oob) {
			return fds, refuse("control data: a header of %d bytes in %d", l, len(oob))
		}
		switch {
		case level != unix.SOL_SOCKET || typ != unix.SCM_RIGHTS:
			bad = refuse("control message %d/%d is not SCM_RIGHTS", level, typ)
		case (l-hdr)%4 != 0:
			bad = refuse("SCM_RIGHTS of %d bytes, not a whole number of fds", l-hdr)
		default:
			for p := hdr; p < l; p += 4 {
				fds = append(fds, int(int32(binary.NativeEndian.Uint32(oob[p:]))))
			}
		}
		next := unix.CmsgSpace(l - hdr)
		if next >= len(oob) {
			break
		}
		oob = oob[next:]
	}
	return fds, bad
}

// A Refusal is a message whose fds were not taken: its Reason says why,
// in words ("fds refused: ..."). It is Link's one refusal shape.
type Refusal = refusal.Refusal

func refuse(format string, a ...any) error {
	return &Refusal{Reason: "fds refused: " + fmt.Sprintf(format, a...)}
}
