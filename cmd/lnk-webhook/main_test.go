package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
)

// start runs the built lnk-webhook with a pipe on its stdin, its
// verdicts read from stdout.
func start(t *testing.T) (*exec.Cmd, io.WriteCloser, *webhookcheck.VerdictReader, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk-webhook"))
	cmd.Env = []string{}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut testenv.SyncBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return cmd, in, webhookcheck.NewVerdictReader(out), &errOut
}

func secrets(t *testing.T, text string) webhookcheck.Secrets {
	v, err := secret.FromString(text)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Destroy)
	return webhookcheck.Secrets{Current: v}
}

func github(body string) webhookcheck.Request {
	return webhookcheck.Request{Method: "POST", Body: []byte(body), Headers: map[string]string{
		"x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		"x-github-delivery":   "d-1"}}
}

// TestChecksGitHubsExample: the real program, given GitHub's documented
// example, answers 200 with the delivery's id; given another body, 401;
// given a wrong secret, 401: three checks, one process, each verdict
// numbered as its check.
func TestChecksGitHubsExample(t *testing.T) {
	cmd, in, vr, errOut := start(t)
	right, wrong := secrets(t, "It's a Secret to Everybody"), secrets(t, "It's a Secret to Nobody")
	checks := []struct {
		s      webhookcheck.Secrets
		body   string
		status int
	}{{right, "Hello, World!", 200}, {right, "Hello, World?", 401}, {wrong, "Hello, World!", 401}}
	for i, c := range checks {
		if err := webhookcheck.WriteFrame(in, uint64(10+i), c.s, github(c.body)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range checks {
		seq, v, err := vr.Next()
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		if seq != uint64(10+i) || v.Status != c.status || (c.status == 200 && (v.ID != "d-1" || v.Scheme != "github")) {
			t.Fatalf("check %d (%q): seq %d, %+v, want %d", i, c.body, seq, v, c.status)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("a closed pipe between checks ends it cleanly: %v: %s", err, errOut)
	}
}

// TestABrokenFrameEndsIt: a frame it can't read ends the program (the
// listener starts another), after answering the checks before it.
func TestABrokenFrameEndsIt(t *testing.T) {
	cmd, in, vr, errOut := start(t)
	webhookcheck.WriteFrame(in, 1, secrets(t, "It's a Secret to Everybody"), github("Hello, World!"))
	io.WriteString(in, "{\"seq\":2,\"method\":\"PUT\",\"headers\":{},\"secrets\":1,\"length\":0}\nx")
	if seq, v, err := vr.Next(); err != nil || seq != 1 || v.Status != 200 {
		t.Fatalf("the check before the broken frame: %d %+v %v: %s", seq, v, err, errOut)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(errOut.String(), "only POST and GET") {
		t.Fatalf("a broken frame: %v: %s", err, errOut)
	}
}

// TestConfinedBeforeItReads: while it waits for its first check, the
// program already runs under seccomp's filter with no_new_privs (so no
// exec, no socket, as its policy says), before it has read a byte.
func TestConfinedBeforeItReads(t *testing.T) {
	cmd, _, _, errOut := start(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		if err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		if bytes.Contains(st, []byte("Seccomp:\t2")) && bytes.Contains(st, []byte("NoNewPrivs:\t1")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not confined while waiting for a check:\n%s", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
