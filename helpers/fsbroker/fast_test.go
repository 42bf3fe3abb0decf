package fsbroker

import (
	"encoding/json"
	"testing"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// Types with the same fields and no methods: wire.Unmarshal decodes them
// by its strict rules alone.
type (
	openReqStrict   OpenReq
	openReplyStrict OpenReply
)

// FuzzFastDecode: what DecodeWire accepts, the strict decoder accepts as
// the same value (so the fast path is never looser); what the strict
// decoder accepts in AppendWire's own form, DecodeWire accepts too (so
// within that form it refuses exactly what the strict decoder refuses);
// and what AppendWire writes, DecodeWire and the strict decoder both
// read back. Its seeds (testdata) hold keys twice, in another case,
// unknown, null and escaped.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"root":"home","path":"a/b.txt"}`,
		`{"root":"home","path":"a/b.txt","max":4096}`,
		`{"root":"home","path":"a","max":0}`,
		`{"root":"home","path":"a","max":-1}`,
		`{"root":"home","path":"a","max":01}`,
		`{"root":"home","path":"\u0061"}`,
		`{"path":"a","root":"home"}`,
		`{"root":"home","path":"a"} `,
		`{"version":"v1:1:2:3:4:5","size":4096}`,
		`{"version":"","size":-0}`,
		`{"version":"v1","size":99999999999999999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var q OpenReq
		if q.DecodeWire(b) {
			var s openReqStrict
			if err := wire.Unmarshal(b, &s); err != nil || OpenReq(s) != q {
				t.Fatalf("open request %q: fast %+v, strict %+v (%v)", b, q, s, err)
			}
			roundTrip(t, &q, &OpenReq{}, func(e wire.Encoder) bool { return *e.(*OpenReq) == q })
		}
		var sq openReqStrict
		if wire.Unmarshal(b, &sq) == nil {
			if enc, ok := (*OpenReq)(&sq).AppendWire(nil); ok && string(enc) == string(b) && !new(OpenReq).DecodeWire(b) {
				t.Fatalf("open request %q: the strict decoder takes it, in the fast form, and DecodeWire does not", b)
			}
		}
		var sr openReplyStrict
		if wire.Unmarshal(b, &sr) == nil {
			if enc, ok := (*OpenReply)(&sr).AppendWire(nil); ok && string(enc) == string(b) && !new(OpenReply).DecodeWire(b) {
				t.Fatalf("open reply %q: the strict decoder takes it, in the fast form, and DecodeWire does not", b)
			}
		}
		var r OpenReply
		if r.DecodeWire(b) {
			var s openReplyStrict
			if err := wire.Unmarshal(b, &s); err != nil || OpenReply(s) != r {
				t.Fatalf("open reply %q: fast %+v, strict %+v (%v)", b, r, s, err)
			}
			roundTrip(t, &r, &OpenReply{}, func(e wire.Encoder) bool { return *e.(*OpenReply) == r })
		}
	})
}

// roundTrip encodes v and decodes it into into, fast and strict.
func roundTrip(t *testing.T, v wire.Encoder, into interface {
	wire.Encoder
	wire.Decoder
}, same func(wire.Encoder) bool) {
	enc, ok := v.AppendWire(nil)
	if !ok {
		t.Fatalf("%+v: AppendWire refused what DecodeWire accepted", v)
	}
	if !into.DecodeWire(enc) || !same(into) {
		t.Fatalf("%s: DecodeWire did not read back %+v", enc, v)
	}
	if err := wire.Unmarshal(enc, into); err != nil || !same(into) {
		t.Fatalf("%s: the strict decoder did not read back %+v: %v", enc, v, err)
	}
}

// The fast forms are what encoding/json writes for the same values.
func TestFastEncodeIsJSON(t *testing.T) {
	for _, v := range []any{
		&OpenReq{Root: "home", Path: "a/b c.txt"},
		&OpenReq{Root: "home", Path: "x", Max: -7},
		&OpenReply{Version: "v1:a:b:c:d:e", Size: 4096},
		&OpenReply{},
	} {
		fast, err := wire.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var slow []byte
		switch x := v.(type) {
		case *OpenReq:
			slow, err = wire.Marshal((*openReqStrict)(x))
		case *OpenReply:
			slow, err = wire.Marshal((*openReplyStrict)(x))
		}
		if err != nil || string(fast) != string(slow) {
			t.Fatalf("%+v: fast %s, encoding/json %s (%v)", v, fast, slow, err)
		}
	}
	if _, ok := (&OpenReq{Root: "home", Path: "a\"b"}).AppendWire(nil); ok {
		t.Fatal("a name with a quote was encoded by the fast path")
	}
}

// The broker's open reply (openOut, the version written in place) is
// byte for byte what OpenReply with the version's token encodes to.
func TestOpenOutIsOpenReply(t *testing.T) {
	for _, v := range []resolve.Version{
		{},
		{Dev: 0xfd01, Ino: 42, Size: 4096, MtimeNs: 1 << 60, CtimeNs: -1},
		{Size: -1},
	} {
		got, err := wire.Marshal(&openOut{v: v})
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.Marshal((*openReplyStrict)(&OpenReply{Version: v.String(), Size: v.Size}))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%+v: %s, want %s (%v)", v, got, want, err)
		}
		viaJSON, err := json.Marshal(&openOut{v: v})
		if err != nil || string(viaJSON) != string(want) {
			t.Fatalf("%+v: encoding/json wrote %s, want %s (%v)", v, viaJSON, want, err)
		}
	}
}
