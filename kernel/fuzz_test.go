package kernel

import (
	"errors"
	"testing"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// FuzzKernelRequest feeds datagrams to the kernel's request decoding as
// the shared record server does it (the record layer, then the kernel's
// table and strict bodies): it never panics, every refusal is a protocol
// violation, and what it accepts encodes back to a body that decodes the
// same.
func FuzzKernelRequest(f *testing.F) {
	k := &Kernel{opts: Options{Testing: true}}
	routes := k.table()
	add := func(s wire.Spec, body string) {
		b, _ := wire.AppendRecord(nil, wire.Record{Kind: wire.KindRequest, Type: s.Type, ID: 7, NFD: s.FDs, Body: []byte(body)})
		f.Add(b, uint8(s.FDs))
	}
	add(proto.Ping, `{}`)
	add(proto.Start, `{"agent":"main","folders":[{"path":"/h/Link","read":true,"write":false}]}`)
	add(proto.Start, `{"agent":"","folders":[],"grants":{"flags":{"Read":["/h/data"],"Internet":true},"dir":"/h"}}`)
	add(proto.End, `{"agent":"main","start":3}`)
	add(proto.Check, `{"agent":"main","handle":"0123456789abcdef0123456789abcdef"}`)
	add(proto.Write, `{"agent":"a","handle":"00","path":"x"}`)
	add(proto.Hold, `{}`)
	add(proto.RunProxy, `{"agent":"main","start":3,"degraded":true,"tool_bridge":false}`)
	add(proto.RunAsk, `{"agent":"main","start":3,"wait":"2m0s","terminal":false,"desktop":["DISPLAY=:1"]}`)
	add(proto.RunBridge, `{"agent":"main","start":3,"degraded":true}`)
	// The rest of the table as the shared server serves it: inline
	// (status), with a reply fd (read), and the stop that runs after its
	// answer.
	add(proto.Status, `{}`)
	add(proto.Stop, `{}`)
	add(proto.Read, `{"agent":"main","handle":"0123456789abcdef0123456789abcdef","path":"notes/a.md"}`)
	add(proto.BrokerFDs, `{}`)
	add(proto.OpenFolder, `{"start":1,"handle":"0123456789abcdef0123456789abcdef"}`)
	add(proto.Attach, `{"start":1}`)
	add(proto.Watch, `{"start":18446744073709551615}`)
	add(proto.EndAgent, `{"agent":"main"}`)
	f.Fuzz(func(t *testing.T, b []byte, nfd uint8) {
		rec, rt, body, err := wire.DecodeRequest(routes, b, int(nfd%4), proto.StateServing)
		if err != nil {
			if !errors.Is(err, wire.ErrProtocol) {
				t.Fatalf("refusal %v is not a protocol violation", err)
			}
			return
		}
		if rec.NFD < rt.FDs || rec.NFD > max(rt.FDs, rt.MaxFDs) {
			t.Fatalf("%s accepted with %d fds", rt.Name, rec.NFD)
		}
		again, err := wire.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rec.Body = again
		b2, err := wire.AppendRecord(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := wire.DecodeRequest(routes, b2, rec.NFD, proto.StateServing); err != nil {
			t.Fatalf("%s: re-encoded body refused: %v (%s)", rt.Name, err, again)
		}
	})
}
