package kernel_test

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// Every bad record closes its connection, is logged once with its
// reason, and leaves the kernel serving others.
func TestBadRecordsCloseTheConnectionAndAreLogged(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	ping := pingRecord()
	for _, tc := range []struct {
		name, reason string
		rec          []byte
		fds          int
	}{
		{"garbage", "shorter than its header", []byte("hello"), 0},
		{"truncated record", "says", ping[:len(ping)-1], 0},
		{"length past the datagram", "says", withLength(ping, uint32(len(ping)+4)), 0},
		{"oversized record", "cap", nil, 0},
		{"unknown type", "unknown request type", record(999, "{}", 0), 0},
		{"fd where none belongs", "carries 1 fds", record(proto.Ping.Type, "{}", 1), 1},
		{"extra field", "ping", record(proto.Ping.Type, `{"x":1}`, 0), 0},
		{"missing field", "end", record(proto.End.Type, `{"agent":"a"}`, 0), 0},
		{"trailing data", "ping", record(proto.Ping.Type, `{} {}`, 0), 0},
		{"a reply where a request belongs", "kind", func() []byte {
			b, _ := wire.AppendRecord(nil, wire.Record{Kind: wire.KindReply, Type: 1, ID: 1, Body: []byte("{}")})
			return b
		}(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd := rawConn(t, home)
			rec := tc.rec
			if tc.name == "oversized record" {
				rec = make([]byte, wire.MaxRecord+1) // over the cap; content never parsed
				copy(rec, ping)
			}
			var oob []byte
			if tc.fds > 0 {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				defer w.Close()
				oob = unix.UnixRights(int(r.Fd()))
			}
			if err := unix.Sendmsg(fd, rec, oob, nil, unix.MSG_NOSIGNAL); err != nil {
				t.Fatalf("send: %v", err)
			}
			if !readEnd(t, fd) {
				t.Fatal("the kernel did not close the connection")
			}
			waitAudit(t, home, "refusing "+tc.name, func(e audit.Entry) bool {
				return e.Kind == audit.KindRefuse && strings.Contains(e.Reason, "connection closed") && strings.Contains(e.Reason, tc.reason)
			})
			if err := connect(t, home).Ping(ctx(t)); err != nil {
				t.Fatalf("the kernel stopped serving after %s: %v", tc.name, err)
			}
		})
	}
}

// A request sent with more fds than the control buffer holds is cut
// (MSG_CTRUNC): every fd that arrived is closed and the connection too.
func TestTooManyFDsCloseTheConnection(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	fd := rawConn(t, home)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fds := make([]int, 200)
	for i := range fds {
		fds[i] = int(r.Fd())
	}
	unix.Sendmsg(fd, pingRecord(), unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL)
	if !readEnd(t, fd) {
		t.Fatal("the kernel did not close the connection")
	}
	waitAudit(t, home, "refusing truncated control data", func(e audit.Entry) bool {
		return e.Kind == audit.KindRefuse && strings.Contains(e.Reason, "connection closed")
	})
	// Every copy the kernel received was closed: the pipe's read end is
	// now ours alone, so closing it makes a write fail with EPIPE.
	r.Close()
	deadlineWrite(t, w)
}

// deadlineWrite polls until a write to w fails with EPIPE (every reader
// closed), failing after 30 s.
func deadlineWrite(t *testing.T, w *os.File) {
	t.Helper()
	for i := 0; i < 3000; i++ {
		_, err := unix.Write(int(w.Fd()), []byte{0})
		if err == unix.EPIPE {
			return
		}
		if err == nil {
			// drain nothing: the pipe holds 64 KiB; keep trying
		}
		sleepBriefly()
	}
	t.Fatal("a copy of the pipe's read end is still open in the kernel")
}
