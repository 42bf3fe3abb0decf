package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move/placedstate"
)

// The placing journal's crash tests: a real lnk agent receive or restore,
// SIGKILLed at each step of its placing (held there by the placing's test
// hook, ~/.lnk/moving/placing-pause in the test's own HOME), then the
// recovery command run: the agent's whole tree, its settings folder, its
// moved note and its secrets are byte for byte as before the placing.

// lnkIn runs lnk in home.
func lnkIn(lnk, home string, args ...string) *exec.Cmd {
	c := exec.Command(lnk, args...)
	c.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}
	return c
}

// killAtStep runs cmd with the placing hook set at step n in home: it
// returns true once the placing paused there (paused, when not nil, is
// run then) and was SIGKILLed, false when cmd ended without pausing (n
// is past the placing's last step), with its output.
func killAtStep(t *testing.T, home string, n int, cmd *exec.Cmd, paused ...func()) (bool, string) {
	t.Helper()
	return killAt(t, home, strconv.Itoa(n), cmd, paused...)
}

// killAt is killAtStep at the hook's mark: a step's number, or "head"
// (the journal's head written, no step yet).
func killAt(t *testing.T, home, mark string, cmd *exec.Cmd, paused ...func()) (bool, string) {
	t.Helper()
	moving := filepath.Join(home, ".lnk", "moving")
	if err := os.MkdirAll(moving, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(moving, "placing-paused"))
	if err := os.WriteFile(filepath.Join(moving, "placing-pause"), []byte(mark), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(moving, "placing-pause"))
	var out testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	// A deadline only so a broken hook fails the test instead of hanging it.
	deadline := time.After(5 * time.Minute)
	for {
		select {
		case <-ended:
			return false, out.String()
		case <-deadline:
			cmd.Process.Kill()
			<-ended
			t.Fatalf("step %s: neither paused nor ended: %s", mark, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		b, err := os.ReadFile(filepath.Join(moving, "placing-paused"))
		if err != nil || string(b) != mark {
			continue
		}
		for _, f := range paused {
			f()
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-ended
		return true, out.String()
	}
}

// TestReceiveKilledWhilePlacingIsUndone: agent main, here before and
// gone to another machine (its moved note), comes back through a real
// lnk agent receive, SIGKILLed at each step of its placing (each rename
// across its files, memory, conversations and Link Harness's home, the
// folders made, the secrets and the moved note's end) and at its end:
// lnk agent status then says the placing was cut short, and lnk agent
// start undoes it first, leaving the agent byte for byte as before, its
// note back (so start then refuses it, moved away); no journal or staging
// folder is left; while the receive is held mid-placing, lnk agent start
// refuses the agent as being put in place. The positive control: the receive not killed puts the
// new agent in place, its journal gone. The same for the agent new on a
// third machine: each kill's recovery removes the agent it was making.
func TestReceiveKilledWhilePlacingIsUndone(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	from, to := testenv.Home(t), testenv.Home(t)
	run := func(c *exec.Cmd) string {
		t.Helper()
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", c.Args, err, out)
		}
		return string(out)
	}
	run(lnkIn(lnk, from, "agent", "create", "main"))
	a, err := caps.LoadAgent(from, "main")
	if err != nil {
		t.Fatal(err)
	}
	lf, lt := caps.Layout{Home: from}, caps.Layout{Home: to}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(lf.FilesDir("main"), "work", "report.md"), "# the new report\n")
	write(filepath.Join(lf.FilesDir("main"), "new-folder", "a.txt"), "new\n")
	// A name that is not UTF-8: journaled byte for byte, undone as itself.
	write(filepath.Join(lf.FilesDir("main"), "caf\xe9.txt"), "latin-1 name\n")
	write(filepath.Join(lf.OwnDir("main"), "chats", "c.jsonl"), "{\"t\":\"new\"}\n")
	write(filepath.Join(lf.OwnDir("main"), "memory", "index.db"), "the new index")
	write(filepath.Join(lf.AgentDir("main"), "Harnesses", caps.LinkHarness, "state", "session.json"), "{\"s\":2}\n")
	v, _ := secret.FromString("model-key-value")
	if err := secrets.Update(from, func(f *secrets.File) error {
		f.Secrets["AGENT_MAIN_MODEL_KEY"] = &secrets.Entry{Value: v, Agents: []string{a.ID}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	run(lnkIn(lnk, from, "agent", "pause", "main"))
	pub := strings.TrimSpace(run(lnkIn(lnk, to, "key", "new", "--out", filepath.Join(to, "move.key"))))
	var sealed bytes.Buffer
	send := lnkIn(lnk, from, "agent", "state-send", "main", "--to", pub)
	var sendErr bytes.Buffer
	send.Stdout, send.Stderr = &sealed, &sendErr
	if err := send.Run(); err != nil {
		t.Fatalf("state-send: %v: %s", err, sendErr.String())
	}
	stream := filepath.Join(to, "move.stream")
	if err := os.WriteFile(stream, sealed.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	receive := func() *exec.Cmd {
		c := lnkIn(lnk, to, "agent", "receive", "--key", filepath.Join(to, "move.key"))
		f, err := os.Open(stream)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		c.Stdin = f
		return c
	}
	// The agent was here before: it arrives once, then lives on here
	// (other files, conversation, memory and harness state, its secret
	// taken back), and leaves (its moved note).
	run(receive())
	write(filepath.Join(lt.FilesDir("main"), "work", "report.md"), "# the old report\n")
	write(filepath.Join(lt.FilesDir("main"), "work", "kept.txt"), "only here\n")
	os.RemoveAll(filepath.Join(lt.FilesDir("main"), "new-folder"))
	write(filepath.Join(lt.OwnDir("main"), "chats", "c.jsonl"), "{\"t\":\"old\"}\n")
	write(filepath.Join(lt.OwnDir("main"), "chats", "c0.jsonl"), "{\"t\":\"older\"}\n")
	write(filepath.Join(lt.OwnDir("main"), "memory", "index.db"), "the old index")
	os.RemoveAll(filepath.Join(lt.AgentDir("main"), "Harnesses"))
	if err := secrets.Update(to, func(f *secrets.File) error {
		delete(f.Secrets, "AGENT_MAIN_MODEL_KEY")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := caps.WriteMovedNote(to, a, "box"); err != nil {
		t.Fatal(err)
	}
	before := placedstate.State(t, to, "main")
	journal := filepath.Join(to, ".lnk", "moving", a.ID+".placing")
	staging := filepath.Join(lt.Agents(), ".moving", a.ID)

	n, changed := 0, 0
	for ; ; n++ {
		// While it places, start refuses the agent half placed.
		whilePlacing := func() {
			c := lnkIn(lnk, to, "agent", "start", "main")
			out, _ := c.CombinedOutput()
			if c.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(out), "under way") {
				t.Errorf("step %d: lnk agent start while a receive places it: exit %d:\n%s", n, c.ProcessState.ExitCode(), out)
			}
		}
		killed, out := killAtStep(t, to, n, receive(), whilePlacing)
		if !killed {
			break
		}
		if _, err := os.Lstat(journal); err != nil {
			t.Fatalf("step %d: killed, no journal left: %v (%s)", n, err, out)
		}
		if placedstate.State(t, to, "main") != before {
			changed++ // what the kill left is part new: the recovery must undo it
		}
		st := lnkIn(lnk, to, "agent", "status", "main")
		if out, _ := st.CombinedOutput(); !strings.Contains(string(out), "CUT SHORT") || !strings.Contains(string(out), "lnk agent start main") {
			t.Fatalf("step %d: lnk agent status does not tell the placing was cut short:\n%s", n, out)
		}
		start := lnkIn(lnk, to, "agent", "start", "main")
		sout, err := start.CombinedOutput()
		if start.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(sout), "is undone") || !strings.Contains(string(sout), "moved") {
			t.Fatalf("step %d: lnk agent start after the kill: %v:\n%s", n, err, sout)
		}
		if after := placedstate.State(t, to, "main"); after != before {
			t.Fatalf("step %d: after the recovery the agent is not as it was:\n%s\n--- was\n%s", n, after, before)
		}
		for _, p := range []string{journal, staging} {
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Fatalf("step %d: %s is left after the recovery: %v", n, p, err)
			}
		}
	}
	t.Logf("killed at %d steps, %d of them leaving the agent part new", n, changed)
	if n < 8 || changed < n-2 {
		t.Fatalf("the placing paused at %d steps, %d of them leaving the agent changed: too few to have killed it at each area", n, changed)
	}
	// The positive control: the run not paused (past the last step, n)
	// put the new agent in place whole and removed its journal.
	for _, rel := range []string{"Agent/chats", "Agent/memory", "Harnesses/" + caps.LinkHarness} {
		if x, y := tree(t, filepath.Join(lf.AgentDir("main"), rel)), tree(t, filepath.Join(lt.AgentDir("main"), rel)); x != y {
			t.Errorf("%s is not as it came:\n%s\n---\n%s", rel, y, x)
		}
	}
	if b, err := os.ReadFile(filepath.Join(lt.FilesDir("main"), "work", "report.md")); err != nil || string(b) != "# the new report\n" {
		t.Errorf("work/report.md is %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(lt.FilesDir("main"), "work", "kept.txt")); err != nil || string(b) != "only here\n" {
		t.Errorf("a file only here was not kept: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(to, ".lnk", "moved", a.ID+".toml")); !os.IsNotExist(err) {
		t.Errorf("the moved note stays: %v", err)
	}
	for _, p := range []string{journal, staging} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is left after a whole receive: %v", p, err)
		}
	}
	if out, err := lnkIn(lnk, to, "agent", "status", "main").CombinedOutput(); err != nil || strings.Contains(string(out), "CUT SHORT") {
		t.Errorf("lnk agent status after a whole receive: %v:\n%s", err, out)
	}

	// New here: killed at each step, lnk agent start undoes the receive
	// and so removes the agent it was making (and then has none to start).
	fresh := testenv.Home(t)
	receiveFresh := func() *exec.Cmd {
		c := lnkIn(lnk, fresh, "agent", "receive", "--key", filepath.Join(to, "move.key"))
		f, err := os.Open(stream)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		c.Stdin = f
		return c
	}
	before = placedstate.State(t, fresh, "main")
	journal = filepath.Join(fresh, ".lnk", "moving", a.ID+".placing")
	staging = filepath.Join(caps.Layout{Home: fresh}.Agents(), ".moving", a.ID)
	for n = 0; ; n++ {
		killed, out := killAtStep(t, fresh, n, receiveFresh())
		if !killed {
			if !strings.Contains(out, "arrived") {
				t.Fatalf("the receive of an agent new here, not killed: %s", out)
			}
			break
		}
		start := lnkIn(lnk, fresh, "agent", "start", "main")
		sout, _ := start.CombinedOutput()
		if start.ProcessState.ExitCode() == 0 || !strings.Contains(string(sout), "is removed") {
			t.Fatalf("new here, step %d: lnk agent start after the kill:\n%s", n, sout)
		}
		if after := placedstate.State(t, fresh, "main"); after != before {
			t.Fatalf("new here, step %d: after the recovery:\n%s\n--- was\n%s", n, after, before)
		}
		for _, p := range []string{journal, staging} {
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Fatalf("new here, step %d: %s is left after the recovery: %v", n, p, err)
			}
		}
	}
	if n < 8 {
		t.Fatalf("new here: the placing paused at %d steps only", n)
	}
	if x, y := tree(t, filepath.Join(lf.OwnDir("main"), "chats")), tree(t, filepath.Join(caps.Layout{Home: fresh}.OwnDir("main"), "chats")); x != y {
		t.Errorf("new here: its conversations are not as they came:\n%s\n---\n%s", y, x)
	}
}

// TestRestoreKilledWhilePlacingIsUndone: a real lnk agent restore,
// SIGKILLed at each step of its placing (each name of Link Harness's home,
// the folders it makes, each of the conversations, instructions and
// skills) and at its end: lnk agent status says the placing was cut
// short; the next lnk agent restore undoes it before anything else (here
// it then refuses the archive, made not the last backup's for the test,
// so what is compared is the undo alone), and the agent is byte for byte
// as before; no journal or restoring folder is left. The positive
// control: the restore not killed puts the backup back, its journal gone.
func TestRestoreKilledWhilePlacingIsUndone(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	home := testenv.Home(t)
	run := func(c *exec.Cmd) string {
		t.Helper()
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", c.Args, err, out)
		}
		return string(out)
	}
	run(lnkIn(lnk, home, "agent", "create", "main"))
	a, err := caps.LoadAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	l := caps.Layout{Home: home}
	hh := filepath.Join(l.AgentDir("main"), "Harnesses", caps.LinkHarness)
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(hh, "state", "notes.md"), "# notes\nbacked up\n")
	write(filepath.Join(hh, "settings.json"), "{\"backed\":1}\n")
	write(filepath.Join(l.OwnDir("main"), "chats", "c1.jsonl"), "{\"t\":\"backed up\"}\n")
	write(filepath.Join(l.OwnDir("main"), "instructions", "AGENT.md"), "# backed up\n")
	write(filepath.Join(l.OwnDir("main"), "skills", "s", "SKILL.md"), "# s\n")
	run(lnkIn(lnk, home, "agent", "backup", "main", "--local"))
	backedUp := map[string]string{}
	for _, d := range []string{hh, filepath.Join(l.OwnDir("main"), "chats"), filepath.Join(l.OwnDir("main"), "skills")} {
		backedUp[d] = tree(t, d)
	}
	// Lived on after the backup: what a restore replaces.
	write(filepath.Join(hh, "state", "notes.md"), "# notes\nafter\n")
	write(filepath.Join(hh, "state", "new.md"), "after the backup\n")
	os.Remove(filepath.Join(hh, "settings.json"))
	write(filepath.Join(l.OwnDir("main"), "chats", "c1.jsonl"), "{\"t\":\"after\"}\n")
	write(filepath.Join(l.OwnDir("main"), "chats", "c2.jsonl"), "{\"t\":\"after too\"}\n")
	os.RemoveAll(filepath.Join(l.OwnDir("main"), "instructions"))
	write(filepath.Join(l.OwnDir("main"), "skills", "other", "SKILL.md"), "# other\n")
	before := placedstate.State(t, home, "main")
	journal := filepath.Join(home, ".lnk", "moving", a.ID+".placing")
	archive := filepath.Join(l.FilesDir("main"), ".lnk-backup", "Agent.tar")
	tar, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	restoring := func() []string {
		m, _ := filepath.Glob(filepath.Join(l.Agents(), ".restoring-*"))
		return m
	}

	n, changed := 0, 0
	for ; ; n++ {
		killed, out := killAtStep(t, home, n, lnkIn(lnk, home, "agent", "restore", "main", "--local"))
		if !killed {
			if !strings.Contains(out, "restored agent main") {
				t.Fatalf("the restore not killed: %s", out)
			}
			break
		}
		if _, err := os.Lstat(journal); err != nil {
			t.Fatalf("step %d: killed, no journal left: %v (%s)", n, err, out)
		}
		if placedstate.State(t, home, "main") != before {
			changed++
		}
		if out, _ := lnkIn(lnk, home, "agent", "status", "main").CombinedOutput(); !strings.Contains(string(out), "CUT SHORT") {
			t.Fatalf("step %d: lnk agent status does not tell the placing was cut short:\n%s", n, out)
		}
		// Not the last backup's, for this run alone: the restore undoes
		// the placing cut short, then refuses it.
		if err := os.WriteFile(archive, append(append([]byte{}, tar...), 0), 0o600); err != nil {
			t.Fatal(err)
		}
		r := lnkIn(lnk, home, "agent", "restore", "main", "--local")
		rout, _ := r.CombinedOutput()
		if err := os.WriteFile(archive, tar, 0o600); err != nil {
			t.Fatal(err)
		}
		if r.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(rout), "is undone") || !strings.Contains(string(rout), "last backup") {
			t.Fatalf("step %d: lnk agent restore after the kill:\n%s", n, rout)
		}
		if after := placedstate.State(t, home, "main"); after != before {
			t.Fatalf("step %d: after the recovery the agent is not as it was:\n%s\n--- was\n%s", n, after, before)
		}
		if _, err := os.Lstat(journal); !os.IsNotExist(err) {
			t.Fatalf("step %d: the journal is left after the recovery: %v", n, err)
		}
		if left := restoring(); len(left) != 0 {
			t.Fatalf("step %d: %v left after the recovery", n, left)
		}
	}
	t.Logf("killed at %d steps, %d of them leaving the agent part restored", n, changed)
	if n < 6 || changed < n-2 {
		t.Fatalf("the placing paused at %d steps, %d of them leaving the agent changed: too few to have killed it at each area", n, changed)
	}
	// The positive control: the run not paused put the backup back.
	for d, want := range backedUp {
		got := tree(t, d)
		if d == hh { // its .env is never in a backup
			got, want = dropEnv(got), dropEnv(want)
		}
		if got != want {
			t.Errorf("%s after the whole restore:\n%s\nwant, as backed up:\n%s", d, got, want)
		}
	}
	if _, err := os.Lstat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal is left after a whole restore: %v", err)
	}
}

// dropEnv drops a tree's .env line.
func dropEnv(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "/.env ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
