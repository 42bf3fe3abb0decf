package connpass

import (
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzRights parses control data as the kernel might hand it: never a
// panic, and fds only from SCM_RIGHTS (anything else is a refusal).
func FuzzRights(f *testing.F) {
	f.Add(unix.UnixRights(7))
	f.Add(unix.UnixRights(3, 4))
	f.Add(unix.UnixCredentials(&unix.Ucred{Pid: 1}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		fds, err := rights(oob)
		msgs, perr := unix.ParseSocketControlMessage(oob)
		if perr != nil && (err == nil || len(fds) > 0) {
			t.Fatalf("control data that does not parse gave fds %v, %v", fds, err)
		}
		if perr == nil && err == nil {
			n := 0
			for _, m := range msgs {
				if m.Header.Type != unix.SCM_RIGHTS || len(m.Data)%4 != 0 {
					t.Fatalf("taken: control message %d of %d bytes", m.Header.Type, len(m.Data))
				}
				n += len(m.Data) / 4
			}
			if len(fds) != n {
				t.Fatalf("%d fds from %d bytes of SCM_RIGHTS", len(fds), 4*n)
			}
		}
	})
}
