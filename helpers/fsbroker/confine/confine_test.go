package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// The test binary, started with this variable naming a folder, confines
// itself as lnk-fsbroker does to <folder>/rw (writable) and <folder>/ro,
// then tries what the broker must not be able to do and prints the
// errno of each attempt.
const childEnv = "LNK_CONFINE_TEST_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(child(dir))
	}
	os.Exit(m.Run())
}

func child(dir string) int {
	var folders []Folder
	for _, f := range []struct {
		name  string
		write bool
	}{{"rw", true}, {"ro", false}} {
		fd, err := unix.Open(filepath.Join(dir, f.name), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		folders = append(folders, Folder{FD: fd, Write: f.write})
	}
	if _, err := Landlock(folders); err != nil {
		fmt.Fprintln(os.Stderr, "landlock:", err)
		return 3
	}
	if err := Seccomp(); err != nil {
		fmt.Fprintln(os.Stderr, "seccomp:", err)
		return 3
	}
	errno := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	res := map[string]string{}
	_, err := os.ReadFile(filepath.Join(dir, "rw", "in"))
	res["read inside"] = errno(err)
	_, err = os.ReadFile(filepath.Join(dir, "ro", "in"))
	res["read read-only"] = errno(err)
	err = os.WriteFile(filepath.Join(dir, "rw", "new"), []byte("x"), 0o600)
	res["write inside"] = errno(err)
	err = os.WriteFile(filepath.Join(dir, "ro", "new"), []byte("x"), 0o600)
	res["write read-only"] = errno(err)
	_, err = os.ReadFile(filepath.Join(dir, "outside"))
	res["read outside"] = errno(err)
	_, err = os.ReadFile("/etc/passwd")
	res["read /etc/passwd"] = errno(err)
	err = syscall.Exec("/bin/true", []string{"true"}, nil)
	res["exec"] = errno(err)
	for name, fam := range map[string]int{"unix socket": unix.AF_UNIX, "inet socket": unix.AF_INET, "netlink socket": unix.AF_NETLINK} {
		fd, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if fam == unix.AF_NETLINK {
			fd, err = unix.Socket(fam, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		}
		if err == nil {
			unix.Close(fd)
		}
		res[name] = errno(err)
	}
	_, err = unix.PtraceGetEventMsg(os.Getppid())
	res["ptrace"] = errno(err)
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func TestBrokerConfinement(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	dir := t.TempDir()
	for _, d := range []string{"rw", "ro"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "in"), []byte("in"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "outside"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{childEnv + "=" + dir}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the confined child: %v\n%s", err, stderr)
	}
	var res map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	t.Logf("confined child: %v", res)
	perm := unix.EACCES.Error()
	eperm := unix.EPERM.Error()
	want := map[string][]string{
		"read inside":      {"ok"},
		"read read-only":   {"ok"},
		"write inside":     {"ok"},
		"write read-only":  {perm},
		"read outside":     {perm},
		"read /etc/passwd": {perm},
		"exec":             {eperm, perm},
		"unix socket":      {eperm},
		"inet socket":      {eperm},
		"netlink socket":   {eperm},
		"ptrace":           {eperm},
	}
	for what, ok := range want {
		got := res[what]
		found := false
		for _, w := range ok {
			if got == w || (w != "ok" && got == "open "+what+": "+w) || (w != "ok" && len(got) > len(w) && got[len(got)-len(w):] == w) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got %q, want one of %q", what, got, ok)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ro", "new")); err == nil {
		t.Error("the confined child wrote into its read-only folder")
	}
}
