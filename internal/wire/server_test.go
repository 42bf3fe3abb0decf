package wire

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// sendRaw writes one datagram with fds on a bare socket.
func sendRaw(t *testing.T, f *os.File, b []byte, fds ...int) {
	t.Helper()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(int(f.Fd()), b, oob, nil, 0); err != nil {
		t.Fatal(err)
	}
}

// wantPeerClosed reads the bare socket until the server's shutdown shows.
func wantPeerClosed(t *testing.T, f *os.File) {
	t.Helper()
	buf := make([]byte, MaxRecord)
	for {
		n, err := unix.Read(int(f.Fd()), buf)
		if n <= 0 || err != nil {
			return
		}
	}
}

func TestViolationsCloseTheChannel(t *testing.T) {
	cases := []struct {
		name string
		rec  func(t *testing.T) []byte
	}{
		{"unknown type", func(t *testing.T) []byte { return rawRequest(t, 99, 1, `{}`, 0) }},
		{"extra field", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"text":"a","more":1}`, 0) }},
		{"missing field", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"n":1}`, 0) }},
		{"field in another case", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"Text":"a"}`, 0) }},
		{"field twice", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"text":"a","text":"b"}`, 0) }},
		{"null for a string", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"text":null}`, 0) }},
		{"trailing data", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"text":"a"} {}`, 0) }},
		{"not json", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"text":`, 0) }},
		{"reply kind where a request belongs", func(t *testing.T) []byte {
			b, _ := AppendRecord(nil, Record{Kind: KindReply, Type: 1, ID: 1, Body: []byte(`{"text":"a"}`)})
			return b
		}},
		{"short header", func(t *testing.T) []byte { return []byte{1, 2, 3} }},
		{"length lies", func(t *testing.T) []byte {
			b := rawRequest(t, 1, 1, `{"text":"a"}`, 0)
			b[0]++
			return b
		}},
		{"bad version", func(t *testing.T) []byte {
			b := rawRequest(t, 1, 1, `{"text":"a"}`, 0)
			b[4] = 9
			return b
		}},
		{"header claims an fd that did not come", func(t *testing.T) []byte { return rawRequest(t, 1, 1, `{"text":"a"}`, 1) }},
		{"oversized record", func(t *testing.T) []byte {
			b := rawRequest(t, 1, 1, `{"text":"`+strings.Repeat("a", MaxRecord-HeaderSize-12)+`"}`, 0)
			return append(b, make([]byte, 4096)...)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			peer, done := served(t, testRoutes(nil, nil))
			defer peer.Close()
			sendRaw(t, peer, c.rec(t))
			wantViolation(t, done)
			wantPeerClosed(t, peer)
		})
	}
}

func TestWrongFDCountClosesAndClosesFDs(t *testing.T) {
	before := openFDs(t)
	peer, done := served(t, testRoutes(nil, nil))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// echo takes no fds; two arrive.
	sendRaw(t, peer, rawRequest(t, 1, 1, `{"text":"a"}`, 2), int(r.Fd()), int(w.Fd()))
	wantViolation(t, done)
	r.Close()
	w.Close()
	peer.Close()
	if after := openFDs(t); after != before {
		t.Fatalf("%d fds open before, %d after: the refused record's fds leaked", before, after)
	}
}

func TestCtruncClosesEveryReceivedFD(t *testing.T) {
	before := openFDs(t)
	peer, done := served(t, testRoutes(nil, nil))
	null, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	fds := make([]int, MaxFDs+6) // more than the reader's control buffer holds
	for i := range fds {
		fds[i] = int(null.Fd())
	}
	rec := rawRequest(t, 2, 1, `{"names":[]}`, 0)
	rec[6] = byte(len(fds))
	sendRaw(t, peer, rec, fds...)
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "MSG_CTRUNC") {
		t.Fatalf("Serve returned %v, want a MSG_CTRUNC violation", err)
	}
	null.Close()
	peer.Close()
	if after := openFDs(t); after != before {
		t.Fatalf("%d fds open before, %d after: fds from a truncated record leaked", before, after)
	}
}
