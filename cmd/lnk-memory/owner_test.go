package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/service"
)

// An owner whose login name holds '.' or '_' (john.doe, svc_ai) is
// served; a name that could leave Agents/.memory, or be read as a flag,
// is refused before any folder is made.
func TestServeOwnerNames(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	for _, owner := range []string{"john.doe", "svc_ai"} {
		t.Run(owner, func(t *testing.T) {
			home := t.TempDir()
			for _, d := range []string{"/Link/Agents/ada/Home/memory", "/Link/Agents/ada/Agent/chats"} {
				if err := os.MkdirAll(home+d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range []string{home + "/Link", home + "/Link/Agents"} {
				os.Chmod(d, 0o700)
			}
			cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner", owner, "--agent", "ada=ada", "--idle", "1s")
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
			out := &testenv.SyncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			sock := filepath.Join(home, "Link/Agents/.memory", owner, "run", service.SocketName)
			for i := 0; ; i++ {
				c, err := net.Dial("unix", sock)
				if err == nil {
					c.Close()
					break
				}
				if i == 200 {
					t.Fatalf("owner %s: never listened: %v\n%s", owner, err, out.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	for _, owner := range []string{"..", ".hidden", "a/b", "-x"} {
		home := t.TempDir()
		cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner="+owner, "--agent", "ada=ada")
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not an owner's name") {
			t.Errorf("owner %q: %v\n%s", owner, err, out)
		}
		if ents, _ := os.ReadDir(home + "/Link/Agents"); len(ents) != 0 {
			t.Errorf("owner %q: made %v", owner, ents)
		}
	}
}
