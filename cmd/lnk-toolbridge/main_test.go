package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// TestConfinement runs the bridge's own probe: once confined it may read
// the tools' folder it was handed (the positive control) and nothing
// else — not HOME, not ~/.lnk, not /etc — write nothing, execute
// nothing, make no socket of any family, and is undumpable.
func TestConfinement(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := t.TempDir()
	defs := filepath.Join(home, ".lnk", "sandbox", "tools")
	if err := os.MkdirAll(defs, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(defs, "probe.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(home, ".lnk", "secret-probe"), []byte("x"), 0o600)
	dir, err := os.Open(defs)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var ends []*os.File
	for i := 0; i < 3; i++ { // the channel, the proxy's and the ask broker's
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[0])
		ends = append(ends, os.NewFile(uintptr(fds[1]), "end"))
		defer ends[i].Close()
	}
	cmd := exec.Command(testenv.Bin(t, "lnk-toolbridge"), "--probe-confinement")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LNK_BROKER_FDS=3"}
	cmd.ExtraFiles = append(ends, dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	want := map[string]string{"read-defs": "allowed", "write-defs": "refused", "read-home": "refused", "read-lnk": "refused",
		"read-etc": "refused", "exec": "refused", "socket-unix": "refused", "socket-inet": "refused", "undumpable": "allowed"}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		got[k], _, _ = strings.Cut(v, " ")
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %s\n%s", k, got[k], v, out)
		}
	}
	if _, err := os.Stat(filepath.Join(defs, "probe-written")); err == nil {
		t.Error("the confined bridge wrote in the tools' folder")
	}
}
