package sandbox_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestNoSecretOnAnyCommandLine: while a sandbox with a proxy runs, the
// proxy's secret (which the sandbox is told in ALL_PROXY, the positive
// control) is on no process's command line, which every local user can
// read: bubblewrap's is `bwrap --args N -- /run/lnk/init …`, its options
// and the environment handed in the fd.
func TestNoSecretOnAnyCommandLine(t *testing.T) {
	w := newWorld(t)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--read", w.data, "--internet-host", "example.com", "--", "sh", "-c", `echo "$ALL_PROXY"; read x`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("the sandbox said nothing: %s", errb.String())
	}
	// socks5h://lnk:<secret>@127.0.0.1:<port>
	_, rest, _ := strings.Cut(sc.Text(), "socks5h://lnk:")
	secret, _, _ := strings.Cut(rest, "@")
	if len(secret) != 64 {
		t.Fatalf("the sandbox was told no proxy secret: %q", sc.Text())
	}
	var bwrap []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("process %s's command line holds the proxy's secret", e.Name())
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(argv[0]) == "bwrap" && atoi(ppid(e.Name())) == cmd.Process.Pid {
			bwrap = argv
		}
	}
	if len(bwrap) < 5 || bwrap[1] != "--args" || bwrap[3] != "--" || bwrap[4] != "/run/lnk/init" {
		t.Fatalf("bubblewrap's command line is %q, want bwrap --args N -- /run/lnk/init …", bwrap)
	}
	if strings.Contains(strings.Join(bwrap, " "), w.home) {
		t.Errorf("bubblewrap's command line names the owner's folders: %q", bwrap)
	}
}
