package kernel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// fakeBridge is this test binary started by the kernel as lnk-toolbridge
// (TestMain, by its name): a compromised bridge. On its channel it asks
// for a tool the start's grants do not name, then for the granted one,
// whose server's stdio it checks (a line written comes back) and ends by
// closing its life; then it sends a record the table does not hold, and
// asks once more. Each outcome is a line on stderr, which the kernel logs;
// then it exits, as a bridge that dies.
func fakeBridge() int {
	say := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	io.Copy(io.Discard, os.Stdin)
	c, err := wire.NewClient(os.NewFile(3, "kernel"))
	if err != nil {
		say("channel: %v", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rep proto.ToolReply
	_, err = c.Call(ctx, proto.ToolStart, &proto.ToolRequest{Tool: "other"}, &rep)
	say("other: %v", err)
	files, err := c.Call(ctx, proto.ToolStart, &proto.ToolRequest{Tool: "cat"}, &rep)
	if err != nil {
		say("cat: %v", err)
		return 1
	}
	files[0].Write([]byte("ping\n"))
	line, _ := bufio.NewReader(files[1]).ReadString('\n')
	say("cat: said %q, digest %t", strings.TrimSpace(line), rep.Digest != "")
	files[0].Close()
	files[3].Close() // its life: the kernel kills it
	io.Copy(io.Discard, files[1])
	say("cat: ended")
	// tool_sessions = 1: two servers at most at once. The first server's
	// end is seen by the kernel when it reaps it, which may come after
	// its stdout's end here: until then it still counts, so a start
	// refused as one too many is asked again.
	var lives []*os.File
	for range 2 {
		var fs []*os.File
		for i := 0; i < 200; i++ {
			if fs, err = c.Call(ctx, proto.ToolStart, &proto.ToolRequest{Tool: "cat"}, &rep); err == nil || !strings.Contains(err.Error(), "its most") {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if err != nil {
			say("held: %v", err)
			return 1
		}
		lives = append(lives, fs[3])
	}
	_, err = c.Call(ctx, proto.ToolStart, &proto.ToolRequest{Tool: "cat"}, &rep)
	say("third: %v", err)
	lives[0].Close()
	for i := 0; i < 200; i++ {
		if _, err = c.Call(ctx, proto.ToolStart, &proto.ToolRequest{Tool: "cat"}, &rep); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	say("room: %v", err)
	err = c.CallRaw(ctx, proto.ToolStart, []byte(`{"tool":"cat","pid":1}`), nil, func(wire.Record, []int) error { return nil })
	say("malformed: %v", err)
	_, err = c.Call(ctx, proto.ToolStart, &proto.ToolRequest{Tool: "cat"}, &rep)
	say("after: %v", err)
	return 0
}

// TestBridgeLaunchOfAToolNotGrantedIsRefused: the kernel starts a
// start's tool bridge as its child (RunBridge), and a bridge that asks
// for the server of a tool the start's grants do not name — a tool the
// owner added, but did not grant — is refused and that logged once; the
// granted tool (the positive control) is started through the one
// launcher and its stdio handed over, a line written to it coming back,
// and closing its life ends it. Servers beyond twice tool_sessions at
// once are refused, one ending makes room. A record the bridge's table does not
// hold closes the channel (logged), after which nothing starts; the
// bridge's death ends the start closed, its last line said.
func TestBridgeLaunchOfAToolNotGrantedIsRefused(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	netAgent(t, home)
	for _, args := range [][]string{
		{"sandbox", "tool", "add", "cat", "--env", "PATH=/usr/bin:/bin", "--", "cat"},
		{"sandbox", "tool", "add", "other", "--env", "PATH=/usr/bin:/bin", "--", "cat"},
		{"agent", "allow", "demo", "--tool", "cat", "--allow", "echo"},
	} {
		if out, code := lnk(t, home, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".lnk", "settings.toml"), []byte("tool_sessions = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"lnk", "lnk-fsbroker", "lnk-askbroker", "lnk-keybroker"} {
		copyFile(t, testenv.Bin(t, name), filepath.Join(bin, name))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, self, filepath.Join(bin, "lnk-toolbridge"))
	startKernelOf(t, home, filepath.Join(bin, "lnk"))
	c := connect(t, home)
	start := compiledStart(t, c)
	req := &proto.RunBridgeRequest{Agent: "demo", Start: start}
	_, err = c.Call(ctx(t), proto.RunBridge, req, &proto.RunBridgeReply{})
	refusedWith(t, err, "run-ask first")
	if _, err := c.Call(ctx(t), proto.RunAsk, &proto.RunAskRequest{Agent: "demo", Start: start, Wait: "1m", Desktop: []string{}}, &proto.Empty{}); err != nil {
		t.Fatal(err)
	}
	var rep proto.RunBridgeReply
	if _, err := c.Call(ctx(t), proto.RunBridge, req, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Route, "/_link/s/") || !strings.HasSuffix(rep.Route, "/mcp/") {
		t.Errorf("route %q", rep.Route)
	}
	revoked := waitAudit(t, home, "the start's end when its bridge died", func(e audit.Entry) bool {
		return e.Kind == audit.KindRevoke && e.Start == start
	})
	if !strings.Contains(revoked.Reason, "its broker tools/") || !strings.Contains(revoked.Reason, "after: ") {
		t.Errorf("the start's end says %q: want its bridge's death and its last line", revoked.Reason)
	}
	log := dumpAudit(t, home)
	said := func(what string) string {
		for _, e := range auditLines(t, home) {
			if r, ok := strings.CutPrefix(e.Reason, "lnk-toolbridge: "+what+": "); ok && e.Kind == audit.KindKernel {
				return r
			}
		}
		t.Errorf("the bridge said nothing of %s:\n%s", what, log)
		return ""
	}
	if got := said("other"); !strings.Contains(got, `tool "other": not granted to the start`) {
		t.Errorf("the ungranted tool: %s", got)
	}
	if got := said("cat"); got != `said "ping", digest true` {
		t.Errorf("the granted tool's server: %s", got)
	}
	said("cat") // …and it ended once its life closed
	if !strings.Contains(log, `"lnk-toolbridge: cat: ended"`) {
		t.Errorf("the granted tool's server never ended:\n%s", log)
	}
	if got := said("third"); !strings.Contains(got, "runs 2 servers already, its most") {
		t.Errorf("a third server at once: %s", got)
	}
	if got := said("room"); got != "<nil>" {
		t.Errorf("no room once a server ended: %s", got)
	}
	if got := said("after"); got == "<nil>" {
		t.Error("a server was started after the channel broke the table")
	}
	ungranted, most := 0, 0
	for _, e := range auditLines(t, home) {
		if e.Kind != audit.KindRefuse || e.Request != "tool-start" {
			continue
		}
		switch {
		case strings.Contains(e.Reason, `tool "other"`):
			ungranted++
		case strings.Contains(e.Reason, "its most"):
			most++ // the third, and any retry before the first's end was seen
		default:
			t.Errorf("refusal of %q", e.Reason)
		}
	}
	if ungranted != 1 || most < 1 {
		t.Errorf("%d refusals of the ungranted tool logged (want 1), %d of a server too many (want some):\n%s", ungranted, most, log)
	}
	if !strings.Contains(log, `"request":"tool bridge"`) || !strings.Contains(log, "its channel closed") {
		t.Errorf("the malformed record's violation was not logged:\n%s", log)
	}
}
