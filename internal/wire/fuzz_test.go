package wire

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeRequest feeds datagrams to the server's decoder with the test
// table: it must never panic, never accept a record over the cap, accept
// only the fd count the type says, and what it accepts must encode and
// decode back to the same request.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []struct {
		typ  Type
		body string
		nfd  int
	}{
		{1, `{"text":"hi"}`, 0},
		{1, `{"text":"hi","n":3}`, 0},
		{2, `{"names":["a"]}`, 1},
		{2, `{"names":null}`, 2},
		{3, `{}`, 0},
		{1, `{"text":"a","x":1}`, 0},
	} {
		b, _ := AppendRecord(nil, Record{Kind: KindRequest, Type: s.typ, ID: 7, NFD: s.nfd, Body: []byte(s.body)})
		f.Add(b, uint8(s.nfd), uint8(0))
	}
	routes := testRoutes(nil, nil)
	f.Fuzz(func(t *testing.T, b []byte, nfd, state uint8) {
		st := State(state % 3)
		rec, rt, body, err := DecodeRequest(routes, b, int(nfd), st)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("a refusal that is not ErrProtocol: %v", err)
			}
			return
		}
		if len(b) > MaxRecord {
			t.Fatalf("accepted a record of %d bytes", len(b))
		}
		if int(binary.LittleEndian.Uint32(b)) != len(b) {
			t.Fatal("accepted a record whose length lies")
		}
		if !rt.fdsOK(int(nfd)) || int(nfd) > MaxFDs {
			t.Fatalf("accepted %d fds for %s", nfd, rt.Name)
		}
		if !rt.States.Has(st) {
			t.Fatalf("accepted %s in state %d", rt.Name, st)
		}
		// Round trip: encode what was decoded, decode it again.
		nb, err := Marshal(body)
		if err != nil {
			t.Fatalf("re-encoding %s: %v", rt.Name, err)
		}
		again, err := AppendRecord(nil, Record{Kind: KindRequest, Type: rec.Type, ID: rec.ID, NFD: rec.NFD, Body: nb})
		if err != nil {
			// Re-encoding may legitimately grow (escapes) past the cap.
			return
		}
		_, _, body2, err := DecodeRequest(routes, again, int(nfd), st)
		if err != nil {
			t.Fatalf("round trip of %s failed: %v\nbody %s", rt.Name, err, nb)
		}
		if !reflect.DeepEqual(body, body2) {
			t.Fatalf("round trip changed %s: %#v became %#v", rt.Name, body, body2)
		}
	})
}
