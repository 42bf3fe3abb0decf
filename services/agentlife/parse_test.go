package agentlife

import (
	"strings"
	"testing"
)

// A /proc/net/tcp table (IPv4 words in the machine's byte order: this
// test is for little-endian machines, as /proc prints there).
const tcpTable = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 00000000:4E21 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0100000A:4E22 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
   3: 0100007F:4E23 0100007F:9999 01 00000000:00000000 00:00000000 00000000     0        0 4 1 0 100 0 0 10 0
   4: 0500007F:4E24 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5 1 0 100 0 0 10 0
`

const tcp6Table = `  sl  local_address                         remote_address                        st tx_queue rx_queue
   0: 00000000000000000000000001000000:4E30 00000000000000000000000000000000:0000 0A 00000000:00000000
   1: 00000000000000000000000000000000:4E31 00000000000000000000000000000000:0000 0A 00000000:00000000
   2: 0000000000000000FFFF00000100007F:4E32 00000000000000000000000000000000:0000 0A 00000000:00000000
   3: 000080FE00000000FF005450B6AD1DFE:4E33 00000000000000000000000000000000:0000 0A 00000000:00000000
`

// TestParseListening: 127.0.0.0/8, 0.0.0.0, ::1, :: and ::ffff:127.0.0.1
// listening count; another address, or a socket not listening, doesn't.
func TestParseListening(t *testing.T) {
	got, err := parseListening(strings.NewReader(tcpTable))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{20000: true, 20001: true, 20004: true}
	if len(got) != len(want) {
		t.Fatalf("tcp: %v, want %v", got, want)
	}
	for p := range want {
		if !got[p] {
			t.Fatalf("tcp: %v, want %v", got, want)
		}
	}
	got, err = parseListening(strings.NewReader(tcp6Table))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got[0x4E30] || !got[0x4E31] || !got[0x4E32] {
		t.Fatalf("tcp6: %v, want ::1, :: and ::ffff:127.0.0.1's ports", got)
	}
	// What can't be read refuses: a start never goes ahead unchecked.
	for _, bad := range []string{"h\n 0: zz:4E20 0 0A\n", "h\n 0: 0100007F 0 0A\n", "h\n 0: 0100007F:XYZ 0 0A\n", "h\n 0:\n"} {
		if _, err := parseListening(strings.NewReader(bad)); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// TestParseRecord refuses what isn't a supervisor's record.
func TestParseRecord(t *testing.T) {
	if _, err := parseRecord([]byte(`{"id":"0123456789abcdef0123456789abcdef","pid":3,"starts":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{`, `{"id":"x"}`, `{"id":"0123456789abcdef0123456789abcdef","pid":-1}`, `[]`,
		`{"id":"0123456789abcdef0123456789abcdef","pid":3,"extra":1}`, `{"id":"0123456789abcdef0123456789abcdef"} {}`} {
		if _, err := parseRecord([]byte(bad)); err == nil {
			t.Errorf("%s read without an error", bad)
		}
	}
}

func FuzzParseListening(f *testing.F) {
	f.Add(tcpTable)
	f.Add(tcp6Table)
	f.Fuzz(func(t *testing.T, s string) {
		ports, err := parseListening(strings.NewReader(s))
		if err == nil {
			for p := range ports {
				if p < 0 || p > 65535 {
					t.Fatalf("port %d", p)
				}
			}
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"agent":"a","id":"0123456789abcdef0123456789abcdef","pid":3,"starts":1,"ports":{"first":20000,"count":200}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := parseRecord(b); err == nil && (r.PID < 0 || r.Starts < 0 || len(r.ID) != 32) {
			t.Fatalf("accepted %+v", r)
		}
	})
}
