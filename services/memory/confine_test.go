package memory_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/filter"
)

const confineEnv = "LNK_MEMORY_TEST_CONFINED"

func TestMain(m *testing.M) {
	if root := os.Getenv(confineEnv); root != "" {
		confinedChild(root)
		return
	}
	os.Exit(m.Run())
}

// confinedChild opens agent ada under root, confines itself to the
// agent's rules, and prints one line per attempt: "ok <what>" or
// "refused <what>: <error>".
func confinedChild(root string) {
	// O_PATH, as lnk-memory opens them: landlock checks no O_PATH open,
	// so a process re-executed inside its domain opens them again.
	home, err := os.OpenFile(root+"/ada/Home", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	own, err := os.OpenFile(root+"/ada/Agent", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	a, err := memory.OpenAgent("ada", home, own)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	rules, fds, err := a.Rules()
	if err != nil {
		fmt.Println("rules:", err)
		os.Exit(1)
	}
	// Its own program read and run, as lnk-memory serve's domain has it
	// for the extractor: so only the filter refuses its exec below.
	exe, err := unix.Open("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Println("exe:", err)
		os.Exit(1)
	}
	rules = append(rules, landlock.Beneath(exe, landlock.Read|landlock.Exec))
	fds = append(fds, exe)
	if _, err := landlock.Restrict(rules...); err != nil {
		fmt.Println("restrict:", err)
		os.Exit(1)
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	// Then its seccomp filter, as lnk-memory serve loads it.
	if err := filter.Service(); err != nil {
		fmt.Println("filter:", err)
		os.Exit(1)
	}
	report := func(what string, err error) {
		if err != nil {
			fmt.Printf("refused %s: %v\n", what, err)
		} else {
			fmt.Printf("ok %s\n", what)
		}
	}
	report("refresh", a.Refresh())
	hits, err := a.Search("kumquat")
	if err == nil && len(hits) != 2 {
		err = fmt.Errorf("%d hits", len(hits))
	}
	report("search", err)
	_, err = a.Remember("main", "a note")
	report("remember", err)
	report("write chats", os.WriteFile(root+"/ada/Agent/chats/main/conversation.md", []byte("mine now"), 0o600))
	report("create in chats", os.WriteFile(root+"/ada/Agent/chats/new.md", []byte("x"), 0o600))
	report("write Home memory", os.WriteFile(root+"/ada/Home/memory/doc.md", []byte("x"), 0o600))
	report("write instructions", os.WriteFile(root+"/ada/Agent/instructions/instruction.md", []byte("x"), 0o600))
	_, err = os.ReadFile(root + "/ada/Agent/instructions/instruction.md")
	report("read instructions", err)
	_, err = os.ReadFile(root + "/ada/Agent/skills/tea/SKILL.md")
	report("read skills", err)
	report("write skills", os.WriteFile(root+"/ada/Agent/skills/tea/SKILL.md", []byte("x"), 0o600))
	report("create in skills", os.WriteFile(root+"/ada/Agent/skills/new.md", []byte("x"), 0o600))
	_, err = os.ReadFile(root + "/ada/Agent/schedule/jobs.json")
	report("read schedule", err)
	_, err = os.ReadFile(root + "/ada/Harnesses/link/state.json")
	report("read Harnesses", err)
	report("write Home", os.WriteFile(root+"/ada/Home/new.md", []byte("x"), 0o600))
	_, err = os.ReadFile(root + "/ada/Agent/Config/agent.toml")
	report("read Config", err)
	_, err = os.ReadFile(root + "/outside.md")
	report("read outside", err)
	_, err = os.ReadFile(root + "/bob/Home/memory/doc.md")
	report("read another agent", err)
	report("write tmp", os.WriteFile(os.TempDir()+"/lnk-memory-escape", []byte("x"), 0o600))
	// Refused by the filter, whatever landlock allows: exec (even of its
	// own program), a user namespace, a network socket, ptrace. The
	// positive control: the unix socket it serves on.
	self := exec.Command("/proc/self/exe", "-test.run=^$")
	self.Env = []string{}
	self.Stdin, self.Stdout, self.Stderr = os.Stdin, os.Stdout, os.Stdout // no /dev/null to open
	report("exec self", self.Run())
	runtime.LockOSThread()
	report("unshare net", unix.Unshare(unix.CLONE_NEWNET))
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	report("inet socket", err)
	if err == nil {
		unix.Close(fd)
	}
	report("ptrace", unix.PtraceAttach(os.Getppid()))
	fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	report("unix socket", err)
	if err == nil {
		unix.Close(fd)
	}
	os.Exit(0)
}

// Confined as lnk-memory is (landlock, then its seccomp filter), the
// service indexes, searches and writes the notes; it writes no
// conversation, no skill, nothing of Home and nothing else, reads of its
// own folder only chats/ and skills/ (not instructions/, schedule/,
// Config/ nor the harnesses' homes) and nothing outside its agent's
// folders, and runs no program, makes no namespace, no
// network socket and traces nothing: its unix socket alone.
func TestConfinedWritesOnlyMemory(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	root := t.TempDir()
	for p, text := range map[string]string{
		root + "/ada/Home/memory/doc.md":                "kumquat doc\n",
		root + "/ada/Agent/chats/main/conversation.md":  "kumquat chat\n",
		root + "/ada/Agent/instructions/instruction.md": "be kind\n",
		root + "/ada/Agent/Config/agent.toml":           "id = 'ada'\n",
		root + "/ada/Agent/skills/tea/SKILL.md":         "# tea\n",
		root + "/ada/Agent/schedule/jobs.json":          "[]\n",
		root + "/ada/Harnesses/link/state.json":         "{}\n",
		root + "/outside.md":                            "outside\n",
		root + "/bob/Home/memory/doc.md":                "bob's\n",
	} {
		write(t, p, text)
	}
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), confineEnv+"="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		verdict, rest, _ := strings.Cut(line, " ")
		what, _, _ := strings.Cut(rest, ":")
		got[what] = verdict
	}
	for what, want := range map[string]string{
		"refresh": "ok", "search": "ok", "remember": "ok",
		"write chats": "refused", "create in chats": "refused", "write Home memory": "refused", "write instructions": "refused",
		"read instructions": "refused", "read skills": "ok", "write skills": "refused", "create in skills": "refused",
		"read schedule": "refused", "read Harnesses": "refused", "write Home": "refused",
		"read Config": "refused", "read outside": "refused", "read another agent": "refused", "write tmp": "refused",
		"exec self": "refused", "unshare net": "refused", "inet socket": "refused", "ptrace": "refused", "unix socket": "ok",
	} {
		if got[what] != want {
			t.Errorf("%s: %s, want %s\n%s", what, got[what], want, out)
		}
	}
	// The filter's refusal (EPERM), not landlock's (EACCES, for a test
	// binary whose loader its domain doesn't hold).
	if !strings.Contains(string(out), "refused exec self: fork/exec /proc/self/exe: operation not permitted") {
		t.Errorf("exec was not refused by the filter:\n%s", out)
	}
	if b, _ := os.ReadFile(root + "/ada/Agent/skills/tea/SKILL.md"); string(b) != "# tea\n" {
		t.Errorf("the skill changed: %q", b)
	}
	if b, _ := os.ReadFile(root + "/ada/Agent/chats/main/conversation.md"); string(b) != "kumquat chat\n" {
		t.Errorf("the conversation changed: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(root, "ada/Agent/memory/notes.md")); err != nil || string(b) != "- a note\n" {
		t.Errorf("notes: %q %v", b, err)
	}
	if _, err := os.Stat(os.TempDir() + "/lnk-memory-escape"); !errors.Is(err, os.ErrNotExist) {
		os.Remove(os.TempDir() + "/lnk-memory-escape")
		t.Error("wrote outside")
	}
}
