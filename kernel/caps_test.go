package kernel_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// makeAgent makes ~/Link/Agents/<name>/Home and returns the Home folder.
func makeAgent(t *testing.T, home, name string) string {
	t.Helper()
	dir := filepath.Join(home, "Link", "Agents", name, "Home")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startAgent(t *testing.T, c *client.Client, agent string, folders ...proto.Folder) *proto.StartReply {
	t.Helper()
	var r proto.StartReply
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: agent, Folders: folders}, &r); err != nil {
		t.Fatalf("start %s: %v", agent, err)
	}
	return &r
}

func check(c *client.Client, t *testing.T, agent, handle string) error {
	var ci proto.CapInfo
	_, err := c.Call(ctx(t), proto.Check, &proto.CapRequest{Agent: agent, Handle: handle}, &ci)
	return err
}

func refusedWith(t *testing.T, err error, reason string) {
	t.Helper()
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != proto.CodeRefused || !strings.Contains(we.Message, reason) {
		t.Fatalf("want a refusal saying %q, got %v", reason, err)
	}
}

// A handle proves something only for its own agent, during its own start.
func TestHandlesAreBoundToTheirAgentAndStart(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	c := connect(t, home)
	mainHome := makeAgent(t, home, "main")
	makeAgent(t, home, "other")
	s1 := startAgent(t, c, "main", proto.Folder{Path: mainHome, Read: true, Write: true})
	if len(s1.Caps) != 1 || len(s1.Caps[0].Handle) != 32 || s1.Caps[0].Rights != "read,write" {
		t.Fatalf("start gave %+v", s1.Caps)
	}
	h := s1.Caps[0].Handle
	if err := check(c, t, "main", h); err != nil {
		t.Fatalf("its own handle: %v", err)
	}
	t.Run("unknown handle", func(t *testing.T) {
		refusedWith(t, check(c, t, "main", strings.Repeat("ab", 16)), "no such capability")
	})
	t.Run("malformed handle", func(t *testing.T) {
		refusedWith(t, check(c, t, "main", "../../etc"), "not 32 hex digits")
	})
	t.Run("another agent's handle", func(t *testing.T) {
		refusedWith(t, check(c, t, "other", h), "another agent")
	})
	var end proto.EndReply
	if _, err := c.Call(ctx(t), proto.End, &proto.EndRequest{Agent: "main", Start: s1.Start}, &end); err != nil || end.Revoked != 1 {
		t.Fatalf("end: %v, %+v", err, end)
	}
	t.Run("revoked handle", func(t *testing.T) {
		refusedWith(t, check(c, t, "main", h), "revoked")
	})
	s2 := startAgent(t, c, "main", proto.Folder{Path: mainHome, Read: true})
	t.Run("a handle from an earlier start", func(t *testing.T) {
		refusedWith(t, check(c, t, "main", h), "revoked")
		if s2.Caps[0].Handle == h {
			t.Fatal("a new start reused a handle")
		}
	})
	// Each refusal was logged once, with its reason and never the whole handle.
	var refusals int
	for _, e := range auditLines(t, home) {
		if e.Kind == audit.KindRefuse && e.Request == "check" {
			refusals++
		}
		if strings.Contains(e.Cap, h) {
			t.Errorf("the log holds a whole handle: %+v", e)
		}
	}
	if refusals != 5 {
		t.Errorf("%d refusals logged, want 5:\n%s", refusals, dumpAudit(t, home))
	}
	waitAudit(t, home, "the grant", func(e audit.Entry) bool {
		return e.Kind == audit.KindGrant && e.Agent == "main" && e.Start == s1.Start && e.Route == mainHome
	})
	waitAudit(t, home, "the use", func(e audit.Entry) bool {
		return e.Kind == audit.KindUse && e.Agent == "main" && e.Request == "check"
	})
}

// A granted folder reached through a link, or Link's settings, is refused
// and the start leaves nothing behind.
func TestStartRefusesALinkedFolderAndTheSettings(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	c := connect(t, home)
	makeAgent(t, home, "main")
	real := t.TempDir()
	link := filepath.Join(home, "linked")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, reason string }{
		{"link", link, "through a link"},
		{"settings", filepath.Join(home, ".lnk"), "Link's settings"},
		{"relative", "Link", "absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", Folders: []proto.Folder{{Path: tc.path, Read: true}}}, &proto.StartReply{})
			refusedWith(t, err, tc.reason)
		})
	}
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Caps != 0 || len(st.Starts) != 0 {
		t.Fatalf("a refused start left %d capabilities, %d starts", st.Caps, len(st.Starts))
	}
	_, err = c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "nobody", Folders: []proto.Folder{}}, &proto.StartReply{})
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != proto.CodeMissing {
		t.Fatalf("start of a missing agent: %v", err)
	}
}

// A start the kernel compiles itself takes the agent's grants from caps:
// the folders the owner allowed, with their rights, and nothing else.
func TestStartCompilesTheAgentsGrants(t *testing.T) {
	home := testenv.Home(t)
	site := filepath.Join(home, "Projects", "site")
	os.MkdirAll(site, 0o700)
	for _, args := range [][]string{{"agent", "create", "demo"}, {"agent", "allow", "demo", "--write", "~/Projects/site"}} {
		if out, code := lnk(t, home, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	startKernel(t, home)
	c := connect(t, home)
	var r proto.StartReply
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "demo", Folders: []proto.Folder{}, Compile: true}, &r); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ci := range r.Caps {
		if ci.Route == site {
			found = ci.Rights == "read,write"
		}
		if strings.HasPrefix(ci.Route, filepath.Join(home, ".lnk")) {
			t.Errorf("a capability on Link's settings: %+v", ci)
		}
	}
	if !found {
		t.Fatalf("the allowed folder is not a read,write capability: %+v", r.Caps)
	}
	_, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "demo", Folders: []proto.Folder{{Path: home, Read: true}}, Compile: true}, &r)
	refusedWith(t, err, "names no folders")
	out, code := lnk(t, home, "kernel", "caps", "demo")
	if code != 0 || !strings.Contains(out, site) || !strings.Contains(out, "revoked") {
		t.Fatalf("lnk kernel caps: exit %d: %s", code, out)
	}
}
