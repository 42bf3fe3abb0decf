package scmrights

import (
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzParse parses control data as the kernel might hand it: never a
// panic, and fds only from whole SCM_RIGHTS messages (anything else is a
// refusal).
func FuzzParse(f *testing.F) {
	f.Add(unix.UnixRights(7))
	f.Add(unix.UnixRights(3, 4))
	f.Add(unix.UnixCredentials(&unix.Ucred{Pid: 1}))
	f.Add(append(unix.UnixRights(5), unix.UnixCredentials(&unix.Ucred{Pid: 1})...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		fds, err := Parse(nil, oob)
		msgs, perr := unix.ParseSocketControlMessage(oob)
		if perr != nil && err == nil {
			t.Fatalf("control data that does not parse gave fds %v and no refusal", fds)
		}
		if perr == nil && err == nil {
			n := 0
			for _, m := range msgs {
				if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_RIGHTS || len(m.Data)%4 != 0 {
					t.Fatalf("taken: control message %d/%d of %d bytes", m.Header.Level, m.Header.Type, len(m.Data))
				}
				n += len(m.Data) / 4
			}
			if len(fds) != n {
				t.Fatalf("%d fds from %d bytes of SCM_RIGHTS", len(fds), 4*n)
			}
		}
	})
}
