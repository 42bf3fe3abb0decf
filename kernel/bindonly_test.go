package kernel_test

import (
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// TestHomeGrantIsBindOnly: an agent granted --read '~' (which its sandbox
// binds with ~/.lnk and ~/Link/Agents under empty mounts) gets ~ from the
// kernel's compile as a bind-only capability: handed to its start's
// sandbox (open-folder), never read through (read refused); a start
// naming ~ itself, with no compile vouching what the sandbox hides, is
// refused as before (the control).
func TestHomeGrantIsBindOnly(t *testing.T) {
	home := testenv.Home(t)
	for _, args := range [][]string{{"agent", "create", "demo"}, {"agent", "allow", "demo", "--read", "~"}} {
		if out, code := lnk(t, home, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	os.WriteFile(filepath.Join(home, ".lnk", "secret-file"), []byte("secret"), 0o600)
	startKernel(t, home)
	c := connect(t, home)
	var r proto.StartReply
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "demo", Folders: []proto.Folder{}, Compile: true}, &r); err != nil {
		t.Fatal(err)
	}
	var homeCap *proto.CapInfo
	for i, ci := range r.Caps {
		if ci.Route == home {
			homeCap = &r.Caps[i]
		}
	}
	if homeCap == nil || homeCap.Rights != "bind" {
		t.Fatalf("~ is not a bind-only capability: %+v", r.Caps)
	}
	_, f, err := c.OpenFolder(ctx(t), r.Start, homeCap.Handle)
	if err != nil {
		t.Fatalf("open-folder of the bind-only ~: %v", err)
	}
	f.Close()
	_, err = c.Call(ctx(t), proto.Read, &proto.FileRequest{Agent: "demo", Handle: homeCap.Handle, Path: ".lnk/secret-file"}, &proto.Empty{})
	refusedWith(t, err, "does not grant that right")

	_, err = c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "demo", Folders: []proto.Folder{{Path: home, Read: true}}}, &proto.StartReply{})
	refusedWith(t, err, "Link's settings")
}
