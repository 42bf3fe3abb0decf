package hub

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// A hub started the way a bridge starts it where no user manager runs (a
// process group of its own), killed outright, leaves no server process or
// child behind; secret-named variables reach neither it nor its server.
func TestKilledHubLeavesNothingAndSecretsNeverReachTheServer(t *testing.T) {
	r := newRig(t)
	t.Setenv("LNK_TEST_API_TOKEN", "sekrit")
	t.Setenv("LNK_DB_PASSWORD", "sekrit")
	t.Setenv("LNK_TEST_HANDED", "yes")
	l := Launcher{Bin: testenv.Bin(t, "lnk-toolhub")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := l.Dial(ctx, r.dir, r.def)
	if err != nil {
		t.Fatal(err)
	}
	pid := hubPid(t, r.key)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	c := &conn{t: t, c: nc}
	c.br = newReader(nc)
	t.Cleanup(func() { nc.Close() })
	c.initialize(1)
	names := strings.Split(c.call(2, "env", ""), ",")
	for _, n := range names {
		if secretish(n) {
			t.Errorf("the server's environment holds %s", n)
		}
	}
	hubEnv, _ := os.ReadFile("/proc/" + itoa(pid) + "/environ")
	if strings.Contains(string(hubEnv), "sekrit") || !strings.Contains(string(hubEnv), "LNK_TEST_HANDED=yes") {
		t.Errorf("the hub's environment: %q", hubEnv)
	}
	c.call(3, "spawn", "")
	testenv.Require(t, strings.Contains(r.readLog(), "in a PID namespace"), "PID namespaces for a hub's server")
	if n := len(r.marked()); n < 2 {
		t.Fatalf("%d marked processes, want the server and its child", n)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the server and its child to be gone", func() bool { return len(r.marked()) == 0 })
}

func hubPid(t *testing.T, key string) int {
	var pid int
	waitFor(t, "the hub's process", func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if strings.Contains(string(b), "--key\x00"+key) {
				pid = atoi(e.Name())
				return true
			}
		}
		return false
	})
	return pid
}

func TestUnitArgsHandVariablesByNameOnly(t *testing.T) {
	env := []string{"HOME=/h", "PATH=/bin", "LANG=C", "XDG_CONFIG_HOME=/h/.config", "LNK_BIN=/b", "LNK_API_KEY=k", "GITHUB_TOKEN=t", "LNK_PASSPHRASE=p", "SHELL=/bin/sh"}
	args := UnitArgs("/usr/bin/lnk-toolhub", "/h/.lnk", "gh", "abc", env)
	want := []string{"--user", "--unit=lnk-tool-gh-abc", "--collect", "--quiet", "--property=KillMode=control-group", "--property=Description=Link's shared tool gh",
		"--setenv=HOME", "--setenv=PATH", "--setenv=LANG", "--setenv=XDG_CONFIG_HOME", "--setenv=LNK_BIN",
		"--", "/usr/bin/lnk-toolhub", "--dir", "/h/.lnk", "--name", "gh", "--key", "abc"}
	if !slices.Equal(args, want) {
		t.Errorf("unit args\n got %q\nwant %q", args, want)
	}
	for _, a := range args {
		for _, v := range []string{"/bin\x00", "=C", "=k", "=t", "=p", "SHELL"} {
			if strings.Contains(a+"\x00", v) && !strings.HasPrefix(a, "--property") {
				t.Errorf("a value on the unit's command line: %q", a)
			}
		}
	}
	if got := HandedEnv(env); !slices.Equal(got, []string{"HOME=/h", "PATH=/bin", "LANG=C", "XDG_CONFIG_HOME=/h/.config", "LNK_BIN=/b"}) {
		t.Errorf("HandedEnv = %q", got)
	}
}

func TestCheckDirTakesOnlyTheUsersOwnFolder(t *testing.T) {
	home := testenv.Home(t)
	own := filepath.Join(home, "own")
	open := filepath.Join(home, "open")
	link := filepath.Join(home, "link")
	os.Mkdir(own, 0o700)
	os.Mkdir(open, 0o755)
	os.Symlink(own, link)
	if err := CheckDir(own); err != nil {
		t.Errorf("the user's own folder: %v", err)
	}
	for _, d := range []string{open, link, "relative", filepath.Join(home, "missing")} {
		if err := CheckDir(d); err == nil {
			t.Errorf("%s was taken", d)
		}
	}
}

func TestKeyIsMadeOnceAndSocketAndLogAre0600(t *testing.T) {
	r := newRig(t)
	k1, _ := Key(r.dir, r.def)
	k2, _ := Key(r.dir, r.def)
	if k1 != k2 || len(k1) != 32 {
		t.Fatalf("keys %q %q", k1, k2)
	}
	// A log past its cap when a hub starts is kept once as .log.1.
	big := make([]byte, MaxLog+10)
	os.WriteFile(r.paths().Log, big, 0o600)
	os.WriteFile(r.paths().Log+".1", []byte("older"), 0o600)
	r.run(time.Minute)
	for _, p := range []string{filepath.Join(filepath.Dir(r.paths().Socket), ".key"), r.paths().Socket, r.paths().Log, r.paths().Lock} {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(r.paths().Log + ".1"); err != nil || fi.Size() != int64(len(big)) {
		t.Errorf("the log past its cap was not kept as .log.1: %v", err)
	}
	if fi, _ := os.Stat(r.paths().Log); fi.Size() >= MaxLog {
		t.Errorf("the new log was not started anew: %d bytes", fi.Size())
	}
}

func TestLogKeepsAtMostMaxLog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.log")
	l, err := openLog(p)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 300<<10)
	for range 5 {
		if n, err := l.Write(chunk); err != nil || n != len(chunk) {
			t.Fatal(n, err)
		}
	}
	l.Close()
	if fi, _ := os.Stat(p); fi.Size() != MaxLog {
		t.Errorf("log of %d bytes, want %d", fi.Size(), MaxLog)
	}
}

// Where systemd-run --user cannot start the unit (no user manager, or
// no systemd at all), the hub still starts, in a process group of its
// own; a SIGTERM stops it and its server.
func TestUnitLaunchFallsBackToAProcessGroup(t *testing.T) {
	r := newRig(t)
	l := Launcher{Bin: testenv.Bin(t, "lnk-toolhub"), Systemd: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := l.Dial(ctx, r.dir, r.def)
	if err != nil {
		t.Fatal(err)
	}
	pid := hubPid(t, r.key)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	c := &conn{t: t, c: nc, br: newReader(nc)}
	t.Cleanup(func() { nc.Close() })
	c.initialize(1)
	if got := c.call(2, "echo", "up"); got != "up" {
		t.Fatalf("echo: %q", got)
	}
	if pgid, _ := syscall.Getpgid(pid); pgid != pid && !SystemdUser() {
		t.Errorf("the hub's process group is %d, not its own (%d)", pgid, pid)
	}
	syscall.Kill(pid, syscall.SIGTERM)
	waitFor(t, "the hub's server to be gone", func() bool { return len(r.marked()) == 0 })
	waitFor(t, "the hub's socket to be removed", func() bool {
		_, err := os.Lstat(r.paths().Socket)
		return os.IsNotExist(err)
	})
}
