package runtool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/kernel/client"
)

// TestKernelGetsNoneOfTheLaunchersEnvironment: a token in the
// environment the harness's launcher handed the run tool never reaches
// the kernel the run tool starts on demand for a call (the run tool keeps
// only what finds the owner's HOME and programs). Where its environment
// is not the test's to read (an undumpable kernel, as an unprivileged
// owner), it must be closed to it, never merely unread.
func TestKernelGetsNoneOfTheLaunchersEnvironment(t *testing.T) {
	a := testAgent(t, "")
	t.Setenv("LNK_TEST_LAUNCHER_TOKEN", "tok-from-the-launcher")
	cs := connect(t, a)
	if text, isErr := call(t, cs, "", "command", map[string]any{"argv": []string{"true"}}); isErr || !strings.HasSuffix(text, "[exit 0]") {
		t.Fatalf("the call: %v %q", isErr, text)
	}
	c, err := client.Connect(a.Home)
	if err != nil {
		t.Fatalf("no kernel runs after the call: %v", err)
	}
	st, err := c.Status(context.Background())
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd := exec.Command(a.Lnk, "kernel", "stop")
		cmd.Env = []string{"HOME=" + a.Home, "PATH=/usr/bin:/bin"}
		cmd.Run()
	})
	env, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ")
	if err != nil {
		if os.Geteuid() != 0 && errors.Is(err, os.ErrPermission) {
			return
		}
		t.Fatalf("the kernel's environment: %v", err)
	}
	if bytes.Contains(env, []byte("tok-from-the-launcher")) {
		t.Fatalf("the kernel's environment holds the launcher's token: %q", env)
	}
	if !bytes.Contains(env, []byte("HOME="+a.Home)) {
		t.Fatalf("read no environment: %q", env)
	}
}
