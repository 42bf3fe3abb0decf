package kernel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// TestStartOfGrants: a start of no agent (lnk sandbox run's flag grants
// or sandbox file) is compiled by the kernel itself: the flags' folder
// becomes a capability of a start whose agent is ""; the kernel refuses
// one naming an agent too, flags it cannot decode strictly, flags and a
// file both, and a folder of an agent's, which no start of no agent is
// granted; none of them leaves a start behind.
func TestStartOfGrants(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	c := connect(t, home)
	data := filepath.Join(home, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	agentHome := makeAgent(t, home, "main")
	flags := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var r proto.StartReply
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Folders: []proto.Folder{}, Grants: &proto.RunGrants{Flags: flags(map[string]any{"Read": []string{data}}), Dir: home}}, &r); err != nil {
		t.Fatalf("a start of flag grants: %v", err)
	}
	if len(r.Caps) != 1 || r.Caps[0].Route != data || r.Caps[0].Rights != "read" {
		t.Fatalf("its capabilities: %+v", r.Caps)
	}
	if _, err := c.EndStart(ctx(t), "", r.Start); err != nil {
		t.Fatalf("its end: %v", err)
	}
	for _, tc := range []struct {
		name string
		req  proto.StartRequest
		want string
	}{
		{"an agent named too", proto.StartRequest{Agent: "main", Grants: &proto.RunGrants{Flags: flags(map[string]any{"Read": []string{data}}), Dir: home}}, "names no agent"},
		{"an unknown flag", proto.StartRequest{Grants: &proto.RunGrants{Flags: json.RawMessage(`{"Reed":["/"]}`), Dir: home}}, "unknown field"},
		{"flags and a file", proto.StartRequest{Grants: &proto.RunGrants{Flags: flags(map[string]any{}), File: filepath.Join(home, "s.toml"), Dir: home}}, "exactly one"},
		{"an agent's folder", proto.StartRequest{Grants: &proto.RunGrants{Flags: flags(map[string]any{"Read": []string{agentHome}}), Dir: home}}, "grants:"},
	} {
		tc.req.Folders = []proto.Folder{}
		_, err := c.Call(ctx(t), proto.Start, &tc.req, &proto.StartReply{})
		refusedWith(t, err, tc.want)
	}
	if st, err := c.Status(ctx(t)); err != nil || len(st.Starts) != 0 {
		t.Fatalf("a refused start left something: %+v %v", st, err)
	}
}
