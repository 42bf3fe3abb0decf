package fsbroker

import (
	"errors"
	"reflect"
	"testing"

	"lnk.dev/lnk/internal/wire"
)

// FuzzBrokerRequest decodes datagrams against the broker's own table, in
// both states: no panic; what is accepted has the fd count its spec says
// and survives an encode/decode round trip.
func FuzzBrokerRequest(f *testing.F) {
	for _, s := range []struct {
		spec wire.Spec
		body any
	}{
		{SpecOpen, &OpenReq{Root: "home", Path: "a/b.txt", Max: 10}},
		{SpecWrite, &WriteReq{Root: "home", Path: "x", Expect: "absent", Data: []byte("hi")}},
		{SpecRename, &RenameReq{Root: "home", From: "a", To: "b", NoReplace: true}},
		{SpecWalk, &ListReq{Root: "home", Path: ".", SkipHidden: true, MaxDepth: 2}},
		{SpecHello, &Hello{Roots: []HelloRoot{{Name: "home", Write: true}}}},
	} {
		body, _ := wire.Marshal(s.body)
		b, _ := wire.AppendRecord(nil, wire.Record{Kind: wire.KindRequest, Type: s.spec.Type, ID: 1, NFD: s.spec.FDs, Body: body})
		f.Add(b, uint8(s.spec.FDs), true)
	}
	routes := Table(nil)
	f.Fuzz(func(t *testing.T, b []byte, nfd uint8, ready bool) {
		st := StateNew
		if ready {
			st = StateReady
		}
		rec, rt, body, err := wire.DecodeRequest(routes, b, int(nfd), st)
		if err != nil {
			if !errors.Is(err, wire.ErrProtocol) {
				t.Fatalf("a refusal that is not ErrProtocol: %v", err)
			}
			return
		}
		if !ready {
			t.Fatalf("%s accepted before the hello", rt.Name)
		}
		if int(nfd) < rt.FDs || int(nfd) > max(rt.FDs, rt.MaxFDs) {
			t.Fatalf("%s accepted with %d fds", rt.Name, nfd)
		}
		nb, err := wire.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		again, err := wire.AppendRecord(nil, wire.Record{Kind: wire.KindRequest, Type: rec.Type, ID: rec.ID, NFD: rec.NFD, Body: nb})
		if err != nil {
			return // re-encoding may grow past the cap
		}
		_, _, body2, err := wire.DecodeRequest(routes, again, int(nfd), st)
		if err != nil || !reflect.DeepEqual(body, body2) {
			t.Fatalf("round trip of %s: %v\n%#v\n%#v", rt.Name, err, body, body2)
		}
	})
}
