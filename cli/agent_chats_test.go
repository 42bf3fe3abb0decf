package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/scheduler"
)

// chatsOf opens agent name's chats/ as Link Harness does.
func chatsOf(t *testing.T, home, name string) *store.Chats {
	t.Helper()
	f, err := os.Open(caps.Layout{Home: home}.OwnDir(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startChat makes conversation thread with one owner's message in it.
func startChat(t *testing.T, c *store.Chats, thread string) {
	t.Helper()
	v, err := c.Open(thread, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Append(&store.Event{Kind: store.KindMessage, Text: "hello " + thread}); err != nil {
		t.Fatal(err)
	}
}

// TestChatsDelete: lnk agent chats list names the conversations; delete
// --yes removes one, which list no longer names, and the scheduler's
// jobs into it with it (read back from the schedule folder: a one-off
// and a recurring one gone, main's kept, none into garden started
// again). Refused, each with a
// hint and nothing removed: main, a stranger's conversation, no
// --thread, no terminal to ask on without --yes (exit 2), one not kept
// (exit 4), one whose log a turn holds, one whose inbox holds a message
// while the agent runs (a real process holding its supervisor's lock);
// the agent stopped, that one is deleted with its inbox. A link planted
// in chats/ is removed as itself, the folder it points at untouched.
func TestChatsDelete(t *testing.T) {
	home := testenv.Home(t)
	a, err := caps.CreateAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	c := chatsOf(t, home, "ada")
	for _, th := range []string{"main", "garden", "work", "busy", "webhook:ci"} {
		startChat(t, c, th)
	}
	jobs, err := scheduler.OpenStore(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	defer jobs.Close()
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for _, j := range []*scheduler.Job{
		{ID: "0123456789abcdef", Thread: "garden", Text: "water", Hops: 1, At: at, Next: at},
		{ID: "1123456789abcdef", Thread: "garden", Text: "weed", Hops: 1, Cron: "0 9 * * *", Next: at},
		{ID: "2123456789abcdef", Thread: "main", Text: "kept", Hops: 1, At: at, Next: at},
	} {
		if err := jobs.Write(j); err != nil {
			t.Fatal(err)
		}
	}
	// jobFiles reads the schedule folder back: the jobs' IDs.
	jobFiles := func() string {
		t.Helper()
		ents, err := os.ReadDir(filepath.Join(caps.Layout{Home: home}.OwnDir("ada"), "schedule"))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range ents {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".json"))
		}
		return strings.Join(ids, " ")
	}
	list := func() string {
		t.Helper()
		code, out, errs := runLnk(t, "agent", "chats", "list", "ada")
		if code != 0 {
			t.Fatalf("list: %d %s", code, errs)
		}
		return out
	}
	if got := list(); got != "busy\ngarden\nmain\nwebhook:ci\nwork\n" {
		t.Fatalf("list: %q", got)
	}
	refused := func(want int, why, hint string, args ...string) {
		t.Helper()
		code, out, errs := runLnk(t, append([]string{"agent", "chats", "delete", "ada"}, args...)...)
		if code != want || !strings.Contains(errs, why) || !strings.Contains(errs, "hint: "+hint) {
			t.Fatalf("%v: code %d, want %d\n%s%s", args, code, want, out, errs)
		}
	}
	refused(ExitRefused, "conversation main is the owner's own", "lnk agent send ada --new --thread T MESSAGE", "--thread", "main", "--yes")
	refused(ExitRefused, "only the owner's own conversations are deleted", "lnk agent chats list ada", "--thread", "webhook:ci", "--yes")
	refused(ExitUsage, "--thread names the conversation", "lnk agent chats list ada")
	refused(ExitUsage, "stdin is not a terminal", "lnk agent chats delete ada --thread garden --yes", "--thread", "garden")
	refused(ExitMissing, "keeps no conversation nosuch", "lnk agent chats list ada", "--thread", "nosuch", "--yes")
	refused(ExitUsage, "is a path", "lnk agent chats list ada", "--thread", "..", "--yes")

	// A turn holds busy's log.
	v, err := c.Open("busy", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	refused(ExitRefused, "a turn is running in it", "wait for the turn to end", "--thread", "busy", "--yes")
	v.Close()

	// The agent runs, and a message waits in work's inbox.
	if _, err := c.Queue("work", store.Queued{ID: 0, From: "stranger:webhook:ci", Text: "later"}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".lnk", "agents", a.ID)
	os.MkdirAll(dir, 0o700)
	lock := filepath.Join(dir, agentlife.LockFile)
	os.WriteFile(lock, nil, 0o600)
	holder := exec.Command("flock", lock, "sleep", "300")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	end := func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() }
	defer end()
	waitRunning(t, home, a, true)
	refused(ExitRefused, "messages from others wait in its inbox", "lnk agent stop ada first", "--thread", "work", "--yes")
	if got := list(); got != "busy\ngarden\nmain\nwebhook:ci\nwork\n" {
		t.Fatalf("after the refusals: %q", got)
	}

	// Deleted: garden while the agent runs (nothing waits there), then
	// work and busy once it is stopped.
	code, out, errs := runLnk(t, "agent", "chats", "delete", "ada", "--thread", "garden", "--yes")
	if code != 0 || !strings.Contains(out, "deleted agent ada's conversation garden") || !strings.Contains(out, "removed 2 scheduled job(s) into it: ") ||
		!strings.Contains(out, "0123456789abcdef") || !strings.Contains(out, "1123456789abcdef") {
		t.Fatalf("delete garden: %d\n%s%s", code, out, errs)
	}
	// Its jobs went with it, main's is kept; garden started again has
	// none.
	if got := jobFiles(); got != "2123456789abcdef" {
		t.Fatalf("the jobs after garden's delete: %q", got)
	}
	startChat(t, c, "garden")
	if left, err := jobs.List(); err != nil || len(left) != 1 || left[0].Thread != "main" {
		t.Fatalf("the jobs listed after garden's delete: %+v %v", left, err)
	}
	end()
	waitRunning(t, home, a, false)
	for _, th := range []string{"work", "busy"} {
		if code, out, errs := runLnk(t, "agent", "chats", "delete", "ada", "--thread", th, "--yes"); code != 0 || !strings.Contains(out, "deleted agent ada's conversation "+th) {
			t.Fatalf("delete %s: %d\n%s%s", th, code, out, errs)
		}
	}
	if got := list(); got != "garden\nmain\nwebhook:ci\n" {
		t.Fatalf("after the deletes: %q", got)
	}

	// A link planted in chats/.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "events.jsonl"), []byte("mine\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(caps.Layout{Home: home}.OwnDir("ada"), "chats", "evil")); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runLnk(t, "agent", "chats", "delete", "ada", "--thread", "evil", "--yes")
	if code != 0 || !strings.Contains(out, "removed as itself") {
		t.Fatalf("delete of a link: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(caps.Layout{Home: home}.OwnDir("ada"), "chats", "evil")); !os.IsNotExist(err) {
		t.Fatalf("the link is left: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "events.jsonl")); err != nil || string(b) != "mine\n" {
		t.Fatalf("the link's target: %q %v", b, err)
	}

	log, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	for _, why := range []string{"conversation main is the owner's own", "a turn is running in it", "messages from others wait in its inbox"} {
		if n := strings.Count(string(log), why); n != 1 {
			t.Errorf("%q is logged %d times:\n%s", why, n, log)
		}
	}
}

// TestChatsDeleteAsksOnATerminal: on a real pseudo-terminal, delete
// without --yes asks; "n" keeps the conversation (exit 1, said so), "y"
// deletes it.
func TestChatsDeleteAsksOnATerminal(t *testing.T) {
	bin := lnkBin(t)
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	startChat(t, chatsOf(t, home, "ada"), "garden")
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	testenv.Require(t, err == nil, "pseudo-terminals (/dev/ptmx)")
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	ptn, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", ptn), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	go func() { // the echo, read so the terminal never fills
		b := make([]byte, 4096)
		for {
			if _, err := master.Read(b); err != nil {
				return
			}
		}
	}()
	ask := func(answer string) (int, string, string) {
		cmd := exec.Command(bin, "agent", "chats", "delete", "ada", "--thread", "garden")
		cmd.Env = append(os.Environ(), "HOME="+home)
		var out bytes.Buffer
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		// The question, read whole before the answer is typed.
		var asked []byte
		for b := make([]byte, 512); !bytes.Contains(asked, []byte("[y/N] ")); {
			n, err := r.Read(b)
			asked = append(asked, b[:n]...)
			if err != nil {
				break
			}
		}
		master.Write([]byte(answer + "\n"))
		rest, _ := io.ReadAll(r)
		cmd.Wait()
		return cmd.ProcessState.ExitCode(), out.String(), string(asked) + string(rest)
	}
	code, out, errs := ask("n")
	if code != ExitFailure || !strings.Contains(errs, "delete agent ada's conversation garden for good") || !strings.Contains(errs, "not confirmed: nothing was deleted") {
		t.Fatalf("answered n: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(caps.Layout{Home: home}.OwnDir("ada"), "chats", "garden")); err != nil {
		t.Fatalf("answered n, and the conversation is gone: %v", err)
	}
	code, out, errs = ask("y")
	if code != 0 || !strings.Contains(out, "deleted agent ada's conversation garden") {
		t.Fatalf("answered y: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(caps.Layout{Home: home}.OwnDir("ada"), "chats", "garden")); !os.IsNotExist(err) {
		t.Fatalf("answered y, and the conversation is there: %v", err)
	}
}

// TestChatsRefuseALinkedOwnFolder: an agent's own folder (Agent/)
// replaced by a link to a copy of it is never opened: list and delete
// are refused, exit 3, with a hint, and the copy's conversation stays;
// the folder put back (the control), list names it.
func TestChatsRefuseALinkedOwnFolder(t *testing.T) {
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	startChat(t, chatsOf(t, home, "ada"), "garden")
	own := caps.Layout{Home: home}.OwnDir("ada")
	if err := os.Rename(own, own+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(own+".real", own); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list", "ada"}, {"delete", "ada", "--thread", "garden", "--yes"}} {
		code, out, errs := runLnk(t, append([]string{"agent", "chats"}, args...)...)
		if code != ExitRefused || !strings.Contains(errs, "link") || !strings.Contains(errs, "hint: lnk agent show ada") {
			t.Fatalf("%v through a linked Agent/: code %d\n%s%s", args, code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(own+".real", "chats", "garden", "events.jsonl")); err != nil {
		t.Fatalf("the conversation behind the link: %v", err)
	}
	os.Remove(own)
	os.Rename(own+".real", own)
	if code, out, errs := runLnk(t, "agent", "chats", "list", "ada"); code != 0 || out != "garden\n" {
		t.Fatalf("the control: code %d\n%s%s", code, out, errs)
	}
}
