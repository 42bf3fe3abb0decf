package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestCreateAndReceiveOfOneNameExcludeEachOther: a real lnk agent
// receive of an agent new here, held (the placing hook's "checked") just
// after it found the name free and before its journal's head, keeps
// lnk agent create of that name out: refused, saying a receive of the
// name is under way, nothing made; a create of another name goes on
// meanwhile. Without the name's lock the create would make the agent
// there, and the receive's placing would then leave a journal cut short
// that lnk agent recover refuses. Once the receive ends (killed here),
// the name is free again: the same create makes it.
func TestCreateAndReceiveOfOneNameExcludeEachOther(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	from, to := testenv.Home(t), testenv.Home(t)
	run := func(home string, args ...string) string {
		t.Helper()
		out, err := lnkIn(lnk, home, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
		return string(out)
	}
	pub := strings.TrimSpace(run(to, "key", "new", "--out", filepath.Join(to, "move.key")))
	run(from, "agent", "create", "newbie")
	run(from, "agent", "pause", "newbie")
	var sealed, serr bytes.Buffer
	send := lnkIn(lnk, from, "agent", "state-send", "newbie", "--to", pub)
	send.Stdout, send.Stderr = &sealed, &serr
	if err := send.Run(); err != nil {
		t.Fatalf("state-send: %v: %s", err, serr.String())
	}
	receive := lnkIn(lnk, to, "agent", "receive", "--key", filepath.Join(to, "move.key"))
	receive.Stdin = bytes.NewReader(sealed.Bytes())

	var createOut string
	var createErr error
	killed, out := killAt(t, to, "checked", receive, func() {
		b, err := lnkIn(lnk, to, "agent", "create", "newbie").CombinedOutput()
		createOut, createErr = string(b), err
		run(to, "agent", "create", "other") // another name: not held
	})
	if !killed {
		t.Fatalf("the receive did not pause once its name was checked: %s", out)
	}
	if createErr == nil || !strings.Contains(createOut, "receive of this agent name is under way") || !strings.Contains(createOut, "hint:") {
		t.Fatalf("create of the name a receive holds: %v: %s", createErr, createOut)
	}
	if _, err := caps.LoadAgent(to, "newbie"); err == nil {
		t.Fatal("the refused create made the agent")
	}
	if _, err := caps.LoadAgent(to, "other"); err != nil {
		t.Fatalf("the create of another name: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(to, ".lnk", "moving", "placing-paused")); err != nil {
		t.Fatalf("the hook's mark: %v", err)
	}
	// The receive gone, its lock went with it.
	run(to, "agent", "create", "newbie")
	if _, err := caps.LoadAgent(to, "newbie"); err != nil {
		t.Fatal(err)
	}
}
