package kernel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// A process of the owner's uid that Link confined (seccomp filter and
// no_new_privs, as every broker and proxy) is refused before a byte is
// read, and the refusal logged; the same program unconfined is answered
// (the positive control).
func TestConfinedPeerIsRefused(t *testing.T) {
	_, err := seccomp.SandboxBPF()
	testenv.Require(t, err == nil, "libseccomp")
	home := testenv.Home(t)
	startKernel(t, home)
	sock := filepath.Join(home, ".lnk", "run", "kernel.sock")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ping := func(confine bool) (string, int) {
		t.Helper()
		cmd := exec.Command(self)
		cmd.Env = []string{"LNK_KERNEL_TEST_CONNECT=" + sock, "PATH=/usr/bin:/bin"}
		if confine {
			cmd.Env = append(cmd.Env, "LNK_KERNEL_TEST_CONFINE=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out)), cmd.Process.Pid
	}
	if got, _ := ping(false); got != "answered" {
		t.Fatalf("an unconfined client of the owner's: %s, want answered", got)
	}
	got, pid := ping(true)
	if got != "closed" {
		t.Fatalf("a confined client: %s, want the connection closed unanswered", got)
	}
	e := waitAudit(t, home, "the refusal of the confined peer", func(e audit.Entry) bool {
		return e.Kind == audit.KindRefuse && e.Peer != nil && e.Peer.PID == pid
	})
	if !strings.Contains(e.Reason, "a process Link confined") {
		t.Errorf("refusal reason %q", e.Reason)
	}
}

// A start never reaches Link's own folders or another agent's: a folder
// that holds ~/.lnk (HOME, /, HOME's parent), ~/Link or ~/Link/Agents,
// another agent's folder or one inside it, and ~/Link/History are all
// refused; the agent's own folder and an ordinary one are granted.
func TestStartRefusesFoldersHoldingLinksOwn(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	c := connect(t, home)
	mainHome := makeAgent(t, home, "main")
	otherHome := makeAgent(t, home, "other")
	if err := os.MkdirAll(filepath.Join(home, "Link", "History"), 0o700); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(home, "projects")
	if err := os.MkdirAll(plain, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, reason string }{
		{"home", home, "holds Link's settings"},
		{"root", "/", "holds Link's settings"},
		{"home's parent", filepath.Dir(home), "holds Link's settings"},
		{"Link", filepath.Join(home, "Link"), "holds every agent's folder"},
		{"Agents", filepath.Join(home, "Link", "Agents"), "holds every agent's folder"},
		{"another agent's folder", filepath.Dir(otherHome), "another agent's"},
		{"another agent's Home", otherHome, "another agent's"},
		{"History", filepath.Join(home, "Link", "History"), "Link/History"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", Folders: []proto.Folder{{Path: tc.path, Read: true}}}, &proto.StartReply{})
			refusedWith(t, err, tc.reason)
		})
	}
	s := startAgent(t, c, "main", proto.Folder{Path: mainHome, Read: true, Write: true}, proto.Folder{Path: plain, Read: true})
	if len(s.Caps) != 2 {
		t.Fatalf("the agent's own folder and an ordinary one: %+v", s.Caps)
	}
}

// A start is its connection's: another connection cannot end it, and it
// is revoked, and logged so, once the connection that made it closes.
func TestStartEndsWithItsConnection(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	maker := connect(t, home)
	other := connect(t, home)
	mainHome := makeAgent(t, home, "main")
	s := startAgent(t, maker, "main", proto.Folder{Path: mainHome, Read: true})
	_, err := other.Call(ctx(t), proto.End, &proto.EndRequest{Agent: "main", Start: s.Start}, &proto.EndReply{})
	refusedWith(t, err, "another connection")
	if err := check(other, t, "main", s.Caps[0].Handle); err != nil {
		t.Fatalf("the start ended at another connection's asking: %v", err)
	}
	maker.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := other.Status(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if st.Caps == 0 && len(st.Starts) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the start outlived its connection: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	refusedWith(t, check(other, t, "main", s.Caps[0].Handle), "revoked")
	waitAudit(t, home, "the revocation", func(e audit.Entry) bool {
		return e.Kind == audit.KindRevoke && e.Start == s.Start && strings.Contains(e.Reason, "connection that made the start closed")
	})
}
