package kernel_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// `lnk sandbox log` shows what the kernel logged, with no character a
// terminal would obey, as words or as JSON lines.
func TestSandboxLogShowsCleanLines(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	c := connect(t, home)
	evil := "ev\x1b]0;pwned\x07il\u202e\u200b"
	c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: evil, Folders: []proto.Folder{}}, &proto.StartReply{})
	for _, args := range [][]string{{"sandbox", "log"}, {"sandbox", "log", "--json"}} {
		out, code := lnk(t, home, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
		if !strings.Contains(out, "kernel started") || !strings.Contains(out, "refuse") || !strings.Contains(out, "ev]0;pwnedil") {
			t.Errorf("%v misses lines:\n%s", args, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n') || r == 0x7f || r == 0x202e || r == 0x200b {
				t.Errorf("%v printed %U", args, r)
			}
		}
	}
	out, _ := lnk(t, home, "sandbox", "log", "--lines", "1")
	if n := strings.Count(out, "\n"); n != 1 {
		t.Errorf("--lines 1 printed %d lines", n)
	}
}

// --follow prints each line as the kernel writes it.
func TestSandboxLogFollowPrintsNewLines(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "log", "--follow", "--json")
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await := func(what string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("log --follow ended before %q", what)
				}
				if strings.Contains(l, what) {
					return
				}
			case <-deadline:
				t.Fatalf("log --follow did not print %q within 30 s", what)
			}
		}
	}
	await("kernel started")
	c := connect(t, home)
	check(c, t, "followed", strings.Repeat("cd", 16))
	await(`"agent":"followed"`)
}

// lnk kernel install writes the unit, 0600, and never through a link.
func TestKernelInstallWritesTheUnit(t *testing.T) {
	home := testenv.Home(t)
	out, code := lnk(t, home, "kernel", "install")
	if code != 0 {
		t.Fatalf("install: %d %s", code, out)
	}
	p := filepath.Join(home, ".config", "systemd", "user", "lnk-kernel.service")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	bin := testenv.Bin(t, "lnk")
	for _, want := range []string{"[Service]", `ExecStart="` + bin + `" kernel run`, `ExecStop="` + bin + `" kernel stop`, "KillSignal=SIGTERM", "WantedBy=default.target"} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("unit mode %o", st.Mode().Perm())
	}
	// A link in its place is refused, and what it points at kept.
	os.Remove(p)
	target := filepath.Join(home, "precious")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.Symlink(target, p)
	if out, code := lnk(t, home, "kernel", "install"); code == 0 {
		t.Fatalf("install over a link: %s", out)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatal("install wrote through a link")
	}
}

// A log folder that is a link is refused, and nothing is read through it.
func TestSandboxLogRefusesALinkedLogFolder(t *testing.T) {
	home := testenv.Home(t)
	os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "audit.log"), []byte(`{"kind":"forged"}`+"\n"), 0o600)
	if err := os.Symlink(elsewhere, filepath.Join(home, ".lnk", "log")); err != nil {
		t.Fatal(err)
	}
	out, code := lnk(t, home, "sandbox", "log")
	if code != 3 || strings.Contains(out, "forged") {
		t.Fatalf("sandbox log through a link: exit %d: %s", code, out)
	}
}
