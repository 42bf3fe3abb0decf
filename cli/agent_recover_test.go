package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// homeTree is every file and folder below home's ~/.lnk and ~/Link, with
// its mode and content's hash, but for what skip drops (a path relative
// to home).
func homeTree(t *testing.T, home string, skip func(rel string) bool) string {
	t.Helper()
	var lines []string
	for _, root := range []string{".lnk", "Link"} {
		filepath.WalkDir(filepath.Join(home, root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(home, p)
			if skip(rel) {
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			line := fmt.Sprintf("%s %v", rel, fi.Mode())
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				line += fmt.Sprintf(" %x", sha256.Sum256(b))
			}
			lines = append(lines, line)
			return nil
		})
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestReceiveOfANewAgentKilledBeforeItIsMadeIsRecovered: a real lnk agent
// receive of agent newbie, new here, SIGKILLed once its placing journal's
// head is written and before the agent is made (the placing hook's
// "head"), with the first folder its making would leave (Home, no
// agent.toml). No lookup by name finds that agent, so: lnk agent list
// names the journal CUT SHORT with its name, ID and lnk agent recover
// newbie (to stderr with --json); status and start of newbie point there
// and never make its agent.toml again with a new ID; lnk agent create
// newbie and a receive of another agent named newbie are refused with
// that hint, nothing made (their controls: create of another name works
// meanwhile, and the same stream's receive works once recovered);
// lnk agent recover newbie removes every trace (~/.lnk and ~/Link walked,
// as before the receive but for the move's lock file, kept by design);
// a second recover finds nothing. The control: the receive not killed
// puts newbie in place and lnk agent list then has no CUT SHORT line.
func TestReceiveOfANewAgentKilledBeforeItIsMadeIsRecovered(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	from, other, to := testenv.Home(t), testenv.Home(t), testenv.Home(t)
	run := func(c *exec.Cmd) string {
		t.Helper()
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", c.Args, err, out)
		}
		return string(out)
	}
	pub := strings.TrimSpace(run(lnkIn(lnk, to, "key", "new", "--out", filepath.Join(to, "move.key"))))
	// newbie on two machines, two agents of one name: each sent here.
	streamOf := func(home, file string) (string, *caps.Agent) {
		run(lnkIn(lnk, home, "agent", "create", "newbie"))
		a, err := caps.LoadAgent(home, "newbie")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(caps.Layout{Home: home}.FilesDir("newbie"), "work", "notes.md")
		if err := os.WriteFile(p, []byte("# from "+file+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		run(lnkIn(lnk, home, "agent", "pause", "newbie"))
		var sealed, serr bytes.Buffer
		send := lnkIn(lnk, home, "agent", "state-send", "newbie", "--to", pub)
		send.Stdout, send.Stderr = &sealed, &serr
		if err := send.Run(); err != nil {
			t.Fatalf("state-send: %v: %s", err, serr.String())
		}
		s := filepath.Join(to, file)
		if err := os.WriteFile(s, sealed.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return s, a
	}
	stream, a := streamOf(from, "move.stream")
	otherStream, b := streamOf(other, "other.stream")
	receive := func(stream string) *exec.Cmd {
		c := lnkIn(lnk, to, "agent", "receive", "--key", filepath.Join(to, "move.key"))
		f, err := os.Open(stream)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		c.Stdin = f
		return c
	}
	run(lnkIn(lnk, to, "agent", "create", "main"))
	lt := caps.Layout{Home: to}
	if err := os.MkdirAll(filepath.Join(to, ".lnk", "moving"), 0o700); err != nil {
		t.Fatal(err)
	}
	skip := func(rel string) bool {
		switch {
		case rel == filepath.Join(".lnk", "moving", a.ID+".lock"), rel == filepath.Join(".lnk", "moving", b.ID+".lock"),
			strings.HasPrefix(rel, filepath.Join(".lnk", "moving", "name-")) && strings.HasSuffix(rel, ".lock"):
			return true // a lock file (a move's, a name's) is kept: one removed while another waits on it is two locks
		case strings.HasPrefix(rel, filepath.Join("Link", "Agents", "other2")), strings.HasPrefix(rel, filepath.Join(".lnk", "agents", "other2")):
			return true // the create control's agent
		case rel == filepath.Join(".lnk", "log") || strings.HasPrefix(rel, filepath.Join(".lnk", "log")+"/"):
			return true // the refusals' audit log
		}
		return false
	}
	before := homeTree(t, to, skip)

	killed, out := killAt(t, to, "head", receive(stream))
	if !killed {
		t.Fatalf("the receive did not pause at its journal's head: %s", out)
	}
	os.Remove(filepath.Join(to, ".lnk", "moving", "placing-paused"))
	journal := filepath.Join(to, ".lnk", "moving", a.ID+".placing")
	if _, err := os.Lstat(journal); err != nil {
		t.Fatalf("killed, no journal: %v (%s)", err, out)
	}
	// What a kill inside its making leaves: its folder, no agent.toml.
	if err := os.MkdirAll(lt.FilesDir("newbie"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(lt.AgentFile("newbie")); !os.IsNotExist(err) {
		t.Fatalf("agent.toml is there: %v", err)
	}

	// lnk agent list names it, with the command that undoes it.
	list := run(lnkIn(lnk, to, "agent", "list"))
	want := fmt.Sprintf("CUT SHORT  a receive of agent newbie (id %s), new here", a.ID)
	if !strings.Contains(list, want) || !strings.Contains(list, "lnk agent recover newbie") || !strings.Contains(list, "main") {
		t.Fatalf("lnk agent list does not name the receive cut short:\n%s", list)
	}
	c := lnkIn(lnk, to, "agent", "list", "--json")
	var jout, jerr bytes.Buffer
	c.Stdout, c.Stderr = &jout, &jerr
	if err := c.Run(); err != nil || !strings.HasPrefix(jout.String(), "[") || !strings.Contains(jerr.String(), want) {
		t.Fatalf("lnk agent list --json: %v:\n%s\n--- stderr\n%s", err, jout.String(), jerr.String())
	}
	// status and start point to it, and never make newbie's agent.toml
	// again with a new ID.
	for _, verb := range []string{"status", "start"} {
		c := lnkIn(lnk, to, "agent", verb, "newbie")
		out, _ := c.CombinedOutput()
		if c.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), "lnk agent recover newbie") {
			t.Fatalf("lnk agent %s newbie: exit %d:\n%s", verb, c.ProcessState.ExitCode(), out)
		}
		if _, err := os.Lstat(lt.AgentFile("newbie")); !os.IsNotExist(err) {
			t.Fatalf("lnk agent %s newbie made its agent.toml: %v", verb, err)
		}
	}
	// Neither create nor a receive of another agent makes a newbie now.
	c = lnkIn(lnk, to, "agent", "create", "newbie")
	if out, _ := c.CombinedOutput(); c.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(out), "lnk agent recover newbie") {
		t.Fatalf("lnk agent create newbie while its receive is cut short: exit %d:\n%s", c.ProcessState.ExitCode(), out)
	}
	c = receive(otherStream)
	if out, _ := c.CombinedOutput(); c.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(out), "lnk agent recover") || !strings.Contains(string(out), a.ID) {
		t.Fatalf("a receive of another newbie while one is cut short: exit %d:\n%s", c.ProcessState.ExitCode(), out)
	}
	if _, err := os.Lstat(lt.AgentFile("newbie")); !os.IsNotExist(err) {
		t.Fatalf("a refused create or receive made newbie's agent.toml: %v", err)
	}
	run(lnkIn(lnk, to, "agent", "create", "other2")) // another name is made meanwhile

	rout := run(lnkIn(lnk, to, "agent", "recover", "newbie"))
	if !strings.Contains(rout, "is removed") {
		t.Fatalf("lnk agent recover newbie: %s", rout)
	}
	if after := homeTree(t, to, skip); after != before {
		t.Fatalf("after lnk agent recover, ~/.lnk and ~/Link are not as before the receive:\n%s", lineDiff(before, after))
	}
	if list := run(lnkIn(lnk, to, "agent", "list")); strings.Contains(list, "CUT SHORT") {
		t.Fatalf("lnk agent list after the recovery:\n%s", list)
	}
	c = lnkIn(lnk, to, "agent", "recover", "newbie")
	if out, _ := c.CombinedOutput(); c.ProcessState.ExitCode() != ExitMissing {
		t.Fatalf("a second lnk agent recover newbie: exit %d:\n%s", c.ProcessState.ExitCode(), out)
	}

	// The control: the same stream, not killed, arrives whole.
	if out := run(receive(stream)); !strings.Contains(out, "arrived") {
		t.Fatalf("the receive not killed: %s", out)
	}
	got, err := caps.LoadAgent(to, "newbie")
	if err != nil || got.ID != a.ID {
		t.Fatalf("newbie after its receive: %+v, %v", got, err)
	}
	if list := run(lnkIn(lnk, to, "agent", "list")); strings.Contains(list, "CUT SHORT") || !strings.Contains(list, a.ID) {
		t.Fatalf("lnk agent list after a whole receive:\n%s", list)
	}
	if _, err := os.Lstat(journal); !os.IsNotExist(err) {
		t.Fatalf("the journal is left after a whole receive: %v", err)
	}
}

// lineDiff names the lines only in was (-) and only in now (+).
func lineDiff(was, now string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, n := in(was), in(now)
	var out []string
	for l := range w {
		if !n[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range n {
		if !w[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestAJournalLinkCannotReadIsListedAndRefusesANewAgent: a file in
// ~/.lnk/moving named as a placing journal that Link cannot read (not
// its form) is named by lnk agent list as CUT SHORT, by its file name;
// since what it names cannot be told, lnk agent create of any name is
// refused meanwhile, as is lnk agent recover of a name; the control:
// once it is removed, create works and list names nothing cut short.
func TestAJournalLinkCannotReadIsListedAndRefusesANewAgent(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	home := testenv.Home(t)
	moving := filepath.Join(home, ".lnk", "moving")
	if err := os.MkdirAll(moving, 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(moving, "0123456789abcdef0123456789abcdef.placing")
	if err := os.WriteFile(bad, []byte("{\"format\":\"not Link's\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := lnkIn(lnk, home, "agent", "list").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CUT SHORT") || !strings.Contains(string(out), "0123456789abcdef0123456789abcdef.placing") || !strings.Contains(string(out), "cannot read") {
		t.Fatalf("lnk agent list: %v:\n%s", err, out)
	}
	for _, args := range [][]string{{"agent", "create", "fresh"}, {"agent", "recover", "fresh"}} {
		c := lnkIn(lnk, home, args...)
		out, _ := c.CombinedOutput()
		if c.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(out), "hint: ") {
			t.Fatalf("lnk %v beside a journal Link cannot read: exit %d:\n%s", args, c.ProcessState.ExitCode(), out)
		}
	}
	if _, err := os.Lstat(caps.Layout{Home: home}.AgentDir("fresh")); !os.IsNotExist(err) {
		t.Fatalf("a refused create made the agent's folder: %v", err)
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	if out, err := lnkIn(lnk, home, "agent", "create", "fresh").CombinedOutput(); err != nil {
		t.Fatalf("lnk agent create once the journal is gone: %v: %s", err, out)
	}
	if out, err := lnkIn(lnk, home, "agent", "list").CombinedOutput(); err != nil || strings.Contains(string(out), "CUT SHORT") || !strings.Contains(string(out), "fresh") {
		t.Fatalf("lnk agent list once the journal is gone: %v:\n%s", err, out)
	}
}
