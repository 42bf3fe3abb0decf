package kernel

import (
	"errors"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// FuzzBridgeRequest feeds datagrams to the kernel's handling of a tool
// bridge's requests as its channel's record server does it (the record
// layer, the bridge's table, strict bodies), then to the check against
// the start's compiled tools: it never panics, every refusal of a record
// is a protocol violation, and a request passes the check only when it
// names exactly a granted tool.
func FuzzBridgeRequest(f *testing.F) {
	k := &Kernel{}
	comp := &caps.Compiled{Tools: map[string]caps.Tool{"echo": {Allow: []string{"echo"}}, "files-2": {AskNone: true}}}
	routes := k.bridgeTable(1, &startRun{comp: comp})
	add := func(s wire.Spec, body string, nfd int) {
		b, _ := wire.AppendRecord(nil, wire.Record{Kind: wire.KindRequest, Type: s.Type, ID: 9, NFD: nfd, Body: []byte(body)})
		f.Add(b, uint8(nfd))
	}
	add(proto.ToolStart, `{"tool":"echo"}`, 0)
	add(proto.ToolDial, `{"tool":"files-2"}`, 0)
	add(proto.ToolStart, `{"tool":"other"}`, 0)
	add(proto.ToolStart, `{"tool":"ECHO"}`, 0)
	add(proto.ToolStart, `{"tool":"echo","tool":"other"}`, 0)
	add(proto.ToolStart, `{"tool":"echo","pid":1}`, 0)
	add(proto.ToolStart, `{"Tool":"echo"}`, 0)
	add(proto.ToolStart, `{"tool":"echo"}`, 1)
	add(proto.ToolDial, `{"tool":"echo\u0000"}`, 0)
	add(proto.RunBridge, `{"agent":"a","start":1}`, 0)
	f.Fuzz(func(t *testing.T, b []byte, nfd uint8) {
		_, rt, body, err := wire.DecodeRequest(routes, b, int(nfd%3), 0)
		if err != nil {
			if !errors.Is(err, wire.ErrProtocol) {
				t.Fatalf("refusal %v is not a protocol violation", err)
			}
			return
		}
		if rt.Type != proto.ToolStart.Type && rt.Type != proto.ToolDial.Type {
			t.Fatalf("request type %d served on a bridge's channel", rt.Type)
		}
		req := body.(*proto.ToolRequest)
		tool, err := grantedTool(comp, req)
		if _, granted := comp.Tools[req.Tool]; granted != (err == nil) || (err == nil && tool != req.Tool) {
			t.Fatalf("tool %q: granted %v, checked %q, %v", req.Tool, granted, tool, err)
		}
		if err != nil && !errors.Is(err, ErrToolNotGranted) {
			t.Fatalf("refusal %v does not say not granted", err)
		}
	})
}
